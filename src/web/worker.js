// The page's worker: it runs the engine (the emscripten module put right after
// this script in the same blob), so that a training run of minutes leaves the
// page free. It answers each request of the page ({id, request}) with
// {kind: 'answer', id, answer}; the engine's progress comes as {kind: 'post'}.
var Module = {
  onPost: function (text) {
    postMessage({ kind: 'post', message: JSON.parse(text) });
  },
  onRuntimeInitialized: function () {
    postMessage({ kind: 'ready' });
  },
  print: function (text) {
    postMessage({ kind: 'log', text: text });
  },
  printErr: function (text) {
    postMessage({ kind: 'log', text: text });
  },
};

onmessage = function (event) {
  var answer;
  try {
    answer = JSON.parse(Module.ccall('seqgrad_call', 'string', ['string'], [JSON.stringify(event.data.request)]));
  } catch (err) {
    answer = { error: String(err && err.message ? err.message : err) };
  }
  postMessage({ kind: 'answer', id: event.data.id, answer: answer });
};
