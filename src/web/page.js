// The page's script: the controls, the worker that runs the engine, and what
// the engine answers put on the page. Every chart arrives as SVG drawn by the
// engine (src/report/svg.cpp, the report's own charts); this script only places it.
(function () {
  'use strict';

  // What the page has done, for a person in the console and for tests/web.
  var state = (window.seqgradState = {
    ready: false,
    busy: false,
    lastProgress: null,
    progressLog: [], // [step, loss, batch accuracy, seconds] of each progress message of the run
    trained: null,
    paths: null,
    compared: null,
    compareProgress: [], // the models whose training the compare mode has reported, in order
    labs: {},
    errors: [],
  });
  var strings = { en: {}, ko: {} };
  var hello = null;
  var lang = 'en';
  var worker = null;
  var nextId = 1;
  var pending = {};

  function $(id) {
    return document.getElementById(id);
  }
  function t(key) {
    return (strings[lang] && strings[lang][key]) || strings.en[key] || key;
  }
  // The catalogue's {} and {:.1f} fields, filled in order.
  function format(template, values) {
    var i = 0;
    return template.replace(/\{[^}]*\}/g, function (field) {
      var v = values[i++];
      var m = /\{:\.(\d+)f\}/.exec(field);
      return m && typeof v === 'number' ? v.toFixed(Number(m[1])) : String(v);
    });
  }
  function text(el, value) {
    el.textContent = value;
    return el;
  }
  function make(tag, className, content) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    if (content !== undefined) el.textContent = content;
    return el;
  }
  function setStatus(message, isError) {
    var s = $('status');
    s.removeAttribute('data-t');
    text(s, message);
    s.className = isError ? 'error' : 'muted';
  }
  function fail(message) {
    state.errors.push(message);
    setStatus(format(t('error'), [message]), true);
  }

  // --- language -------------------------------------------------------------------------------
  function applyLanguage() {
    document.documentElement.lang = lang;
    $('lang').value = lang;
    document.querySelectorAll('[data-t]').forEach(function (el) {
      el.textContent = t(el.getAttribute('data-t'));
    });
    if (hello) renderLabs();
    if (state.trained) showTrained(state.trained, false);
    if (state.compared) showCompared(state.compared);
  }
  function chooseLanguage() {
    var saved = null;
    try {
      saved = localStorage.getItem('seqgrad.lang');
    } catch (e) {
      saved = null; // storage may be off for pages opened from disk
    }
    if (saved === 'en' || saved === 'ko') return saved;
    var langs = navigator.languages || [navigator.language || 'en'];
    return String(langs[0] || 'en').toLowerCase().indexOf('ko') === 0 ? 'ko' : 'en';
  }
  $('lang').addEventListener('change', function () {
    lang = $('lang').value;
    try {
      localStorage.setItem('seqgrad.lang', lang);
    } catch (e) {
      /* not kept: the choice lasts while the page is open */
    }
    applyLanguage();
  });

  // --- the worker -----------------------------------------------------------------------------
  function startWorker() {
    var source = $('worker-js').textContent + '\n' + $('engine-js').textContent;
    var url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    worker = new Worker(url);
    worker.onmessage = function (event) {
      var m = event.data;
      if (m.kind === 'ready') {
        URL.revokeObjectURL(url);
        onEngineReady();
      } else if (m.kind === 'post') {
        onPost(m.message);
      } else if (m.kind === 'answer') {
        var done = pending[m.id];
        delete pending[m.id];
        if (done) done(m.answer);
      } else if (m.kind === 'log') {
        console.log(m.text);
      }
    };
    worker.onerror = function (event) {
      fail(event.message || 'the engine stopped');
    };
  }
  function call(request) {
    return new Promise(function (resolve) {
      var id = nextId++;
      pending[id] = resolve;
      worker.postMessage({ id: id, request: request });
    });
  }
  // One job at a time: the engine runs on one thread.
  function setBusy(busy) {
    state.busy = busy;
    $('train-start').disabled = busy || !state.ready;
    $('paths-run').disabled = busy || !state.ready;
    $('compare-run').disabled = busy || !state.ready;
    $('train-stop').disabled = !busy;
    document.querySelectorAll('.lab button').forEach(function (b) {
      b.disabled = busy || !state.ready;
    });
  }
  function job(request, onAnswer) {
    if (state.busy) {
      setStatus(t('busy'), true);
      return;
    }
    setBusy(true);
    call(request).then(function (answer) {
      setBusy(false);
      if (answer.error) fail(answer.error);
      else onAnswer(answer);
    });
  }
  // Stop: the worker is busy inside the engine and reads no message, so it is
  // ended and a fresh one started.
  $('train-stop').addEventListener('click', function () {
    worker.terminate();
    pending = {};
    state.ready = false;
    setBusy(false);
    setStatus(t('train.stopped'));
    startWorker();
  });

  function onEngineReady() {
    call({ cmd: 'hello' }).then(function (answer) {
      if (answer.error) return fail(answer.error);
      var first = hello === null;
      hello = answer;
      strings = answer.strings;
      if (first) {
        lang = chooseLanguage();
        fillControls();
      }
      state.ready = true;
      applyLanguage();
      setStatus(t('ready') + ' seqgrad ' + answer.version);
      setBusy(false);
    });
  }

  function fillControls() {
    hello.models.forEach(function (m) {
      $('model').appendChild(new Option(m, m, false, m === 'transformer'));
    });
    hello.attentions.forEach(function (a) {
      $('attention-kind').appendChild(new Option(a, a, false, a === 'softmax'));
    });
    // Only the Transformer has attention: the choice is greyed out for the recurrent models.
    var setAttention = function () {
      $('attention-kind').disabled = $('model').value !== 'transformer';
    };
    $('model').addEventListener('change', setAttention);
    setAttention();
    hello.tasks.forEach(function (task) {
      $('task').appendChild(new Option(task.name, task.name, false, task.name === 'recall'));
    });
    var setLen = function () {
      var task = hello.tasks.find(function (x) {
        return x.name === $('task').value;
      });
      $('len').value = task ? Math.min(task.len, 256) : 8;
    };
    $('task').addEventListener('change', setLen);
    setLen();
  }

  // --- training -------------------------------------------------------------------------------
  function setCharts(el, svgs) {
    el.innerHTML = svgs.join('');
  }
  function onPost(m) {
    if (m.type === 'progress') {
      state.lastProgress = m;
      state.progressLog.push([m.step, m.loss, m.accuracy === undefined ? null : m.accuracy, m.elapsed]);
      text($('train-progress'), m.text);
      setCharts($('progress-charts'), m.charts);
    } else if (m.type === 'compare-progress') {
      if (state.compareProgress.indexOf(m.model) < 0) state.compareProgress.push(m.model);
      text($('compare-progress'), m.text);
    } else if (m.type === 'grads') {
      setCharts($('grads-charts'), m.charts);
    }
  }
  function readInt(id) {
    var v = Number($(id).value);
    return Number.isInteger(v) ? v : NaN;
  }
  $('train-start').addEventListener('click', function () {
    var request = {
      cmd: 'train',
      model: $('model').value,
      attention: $('model').value === 'transformer' ? $('attention-kind').value : 'softmax',
      task: $('task').value,
      len: readInt('len'),
      steps: readInt('steps'),
      d_model: readInt('d_model'),
      seed: readInt('seed'),
      lang: lang,
    };
    for (var key in request) {
      if (typeof request[key] === 'number' && isNaN(request[key])) return fail("'" + key + "' must be a whole number");
    }
    state.trained = null;
    state.lastProgress = null;
    state.progressLog = [];
    ['train-result', 'attention', 'attention-note', 'trained-paths'].forEach(function (id) {
      $(id).innerHTML = '';
    });
    text($('train-progress'), '');
    job(request, showTrained);
  });

  function row(table, cells, header) {
    var tr = table.insertRow();
    cells.forEach(function (c) {
      tr.appendChild(make(header ? 'th' : 'td', '', c));
    });
  }
  // The run's result; drawn again, without its charts, when the language changes.
  function showTrained(r, withCharts) {
    state.trained = r;
    text($('train-progress'), format(t('train.done'), [r.steps, r.seconds, r.ms_per_step, r.params]));
    if (withCharts !== false) {
      setCharts($('progress-charts'), r.charts);
      setCharts($('grads-charts'), r.grads);
      if (r.attention) setCharts($('attention'), r.attention);
    }
    if (!r.attention) text($('attention'), t('attention.none'));
    // The head that looks at the key, named in the page's language (the charts keep the run's).
    text($('attention-note'), r.attention_note ? r.attention_note[lang] : '');
    var out = $('train-result');
    out.innerHTML = '';
    out.appendChild(make('h3', '', t('eval.heading')));
    var table = make('table');
    table.id = 'eval-table';
    [
      ['token_acc', 'eval.token_acc'],
      ['seq_acc', 'eval.seq_acc'],
      ['mse', 'eval.mse'],
      ['loss', 'eval.loss'],
    ].forEach(function (k) {
      if (r.eval[k[0]] === undefined) return;
      var v = r.eval[k[0]];
      row(table, [t(k[1]), k[0].indexOf('acc') >= 0 ? (100 * v).toFixed(1) + '%' : v.toFixed(4)]);
    });
    out.appendChild(table);
    if (r.examples.length) {
      out.appendChild(make('h3', '', t('examples')));
      var ex = make('table', 'mono');
      r.examples.forEach(function (x) {
        row(ex, [x.input, x.prediction, x.target, x.correct ? '✓' : '✗']);
      });
      out.appendChild(ex);
    }
    var p = r.paths;
    text($('trained-paths'), format(t('paths.trained'), [p.len, p.from_first, p.from_last, p.sequential_ops]));
  }

  // --- the comparison: the recurrent models beside the Transformer -------------------------------
  $('compare-run').addEventListener('click', function () {
    var request = {
      cmd: 'compare',
      models: ['rnn', 'lstm', 'transformer'],
      len: readInt('compare-len'),
      steps: readInt('compare-steps'),
      lang: lang,
    };
    if (isNaN(request.len)) return fail("'len' must be a whole number");
    if (isNaN(request.steps)) return fail("'steps' must be a whole number");
    state.compared = null;
    state.compareProgress = [];
    ['compare-table', 'compare-charts'].forEach(function (id) {
      $(id).innerHTML = '';
    });
    text($('compare-verdict'), '');
    text($('compare-progress'), t('compare.running'));
    job(request, function (r) {
      state.compared = r;
      text($('compare-progress'), '');
      setCharts($('compare-charts'), r.charts);
      showCompared(r);
    });
  });
  // The table and the verdict; drawn again when the language changes (the charts keep theirs).
  function showCompared(r) {
    text($('compare-verdict'), r.verdict);
    $('compare-verdict').className = 'verdict ' + (r.verdict_kind === 'attention' ? 'holds' : 'inconclusive');
    var out = $('compare-table');
    out.innerHTML = '';
    var table = make('table');
    table.id = 'compare-rows';
    row(table, [t('compare.model'), t('compare.params'), t('compare.token_acc'), t('compare.grad'), t('compare.path')], true);
    r.rows.forEach(function (m) {
      row(table, [
        m.model,
        String(m.params),
        (100 * m.token_acc).toFixed(1) + '%',
        m.grad_far_near.toExponential(2),
        String(m.path_from_first),
      ]);
    });
    out.appendChild(table);
  }

  // --- path lengths ---------------------------------------------------------------------------
  $('paths-run').addEventListener('click', function () {
    job({ cmd: 'paths', lang: lang }, function (r) {
      state.paths = r;
      setCharts($('paths-chart'), [r.chart]);
    });
  });

  // --- labs -----------------------------------------------------------------------------------
  function renderLabs() {
    var list = $('lab-list');
    list.innerHTML = '';
    hello.labs.forEach(function (lab) {
      var box = make('div', 'lab');
      box.id = 'lab-' + lab.name;
      box.appendChild(make('h3', '', lab.name));
      box.appendChild(make('span', 'muted', '  (' + lab.source[lang] + ')'));
      box.appendChild(make('p', '', lab.claim[lang]));
      var button = make('button', '', t('labs.run'));
      button.type = 'button';
      button.disabled = state.busy || !state.ready;
      var result = make('div', 'result');
      button.addEventListener('click', function () {
        text(result, t('labs.running'));
        job({ cmd: 'lab', name: lab.name, lang: lang }, function (r) {
          state.labs[lab.name] = r;
          showLab(result, r);
        });
      });
      box.appendChild(button);
      box.appendChild(result);
      var done = state.labs[lab.name];
      if (done) showLab(result, done);
      list.appendChild(box);
    });
  }
  function showLab(el, r) {
    el.innerHTML = '';
    var verdict = r.holds ? 'holds' : r.inconclusive ? 'inconclusive' : 'fails';
    el.appendChild(make('span', 'verdict ' + verdict, t('labs.' + verdict)));
    el.appendChild(make('pre', '', r.lines[lang].concat([''], r.conditions[lang]).join('\n')));
    el.appendChild(make('p', '', r.verdict_line[lang]));
  }

  lang = chooseLanguage();
  $('lang').value = lang;
  startWorker();
})();
