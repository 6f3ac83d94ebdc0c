#include "src/web/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "src/bench/workloads.h"
#include "src/inspect/attention.h"
#include "src/inspect/charts.h"
#include "src/inspect/compare.h"
#include "src/inspect/grads.h"
#include "src/inspect/paths.h"
#include "src/labs/lab.h"
#include "src/nn/choices.h"
#include "src/report/svg.h"
#include "src/text/catalogue.h"
#include "src/train/config.h"
#include "src/train/inspect_batch.h"
#include "src/train/run.h"
#include "src/train/trainer.h"

namespace seqgrad::web {

using nlohmann::json;

namespace {

// --- reading a request: every field checked, every message one line --------------------------

std::string string_field(const json& r, const char* key, const std::string& fallback) {
  if (!r.contains(key)) return fallback;
  if (!r[key].is_string()) throw std::invalid_argument(fmt::format("'{}' must be a string", key));
  return r[key].get<std::string>();
}

std::string choice_field(const json& r, const char* key, const std::string& fallback,
                         const std::vector<std::string>& choices) {
  const std::string v = string_field(r, key, fallback);
  if (std::find(choices.begin(), choices.end(), v) == choices.end())
    throw std::invalid_argument(fmt::format("'{}' is '{}'; expected one of {}", key, v, fmt::join(choices, ", ")));
  return v;
}

// (std::int64_t: a long is 32 bits in WebAssembly.)
std::int64_t int_field(const json& r, const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  if (!r.contains(key)) return fallback;
  const json& v = r[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    throw std::invalid_argument(fmt::format("'{}' must be a whole number from {} to {}", key, lo, hi));
  return v.get<std::int64_t>();
}

text::Lang lang_field(const json& r) {
  return choice_field(r, "lang", "en", {"en", "ko"}) == "ko" ? text::Lang::ko : text::Lang::en;
}

std::string tr(const char* id, text::Lang lang) { return std::string(text::tr(id, lang)); }

// --- hello -----------------------------------------------------------------------------------

json hello() {
  json strings = {{"en", json::object()}, {"ko", json::object()}};
  for (const text::Entry& e : text::entries()) {
    if (!e.id.starts_with("web.")) continue;
    strings["en"][std::string(e.id.substr(4))] = e.en;
    strings["ko"][std::string(e.id.substr(4))] = e.ko;
  }
  json task_list = json::array();
  for (const std::string& name : tasks::task_names()) {
    const auto task = tasks::make_task({name, 0, "", ""});
    task_list.push_back({{"name", name}, {"len", task->info().len}, {"input", task->info().input}});
  }
  json lab_list = json::array();
  for (const labs::Lab& lab : labs::all_labs()) {
    const std::string source = "lab." + lab.name + ".source";
    lab_list.push_back(
        {{"name", lab.name},
         {"source", {{"en", text::tr(source, text::Lang::en)}, {"ko", text::tr(source, text::Lang::ko)}}},
         {"claim", {{"en", labs::claim_text(lab, text::Lang::en)}, {"ko", labs::claim_text(lab, text::Lang::ko)}}}});
  }
  return {{"version", SEQGRAD_VERSION},
          {"models", nn::choices::kinds},
          {"attentions", nn::choices::attentions},
          {"tasks", task_list},
          {"labs", lab_list},
          {"strings", strings}};
}

// --- train -----------------------------------------------------------------------------------

// The loss and the batch accuracy so far, as two line charts.
json progress_charts(const std::vector<train::StepLog>& log, text::Lang lang) {
  report::LineChart loss{
      tr("web.chart.loss", lang), tr("web.chart.step", lang), tr("web.chart.loss_axis", lang), true, {}, 480, 280};
  report::LineChart acc{tr("web.chart.accuracy", lang),
                        tr("web.chart.step", lang),
                        tr("web.chart.accuracy_axis", lang),
                        false,
                        {},
                        480,
                        280};
  report::Series l{tr("web.chart.loss_axis", lang), {}, {}}, a{tr("web.chart.accuracy_axis", lang), {}, {}};
  for (const train::StepLog& s : log) {
    l.x.push_back(static_cast<double>(s.step)), l.y.push_back(s.loss);
    if (s.accuracy) a.x.push_back(static_cast<double>(s.step)), a.y.push_back(*s.accuracy);
  }
  loss.series.push_back(l);
  json out = json::array({report::svg(loss)});
  if (!a.x.empty()) {
    acc.series.push_back(a);
    out.push_back(report::svg(acc));
  }
  return out;
}

// The gradient profile before training and now, and every profile so far as a heatmap.
json grads_charts(const std::string& model, const std::vector<long>& steps,
                  const std::vector<inspect::GradProfile>& profiles, text::Lang lang) {
  report::LineChart line{
      model + ": " + tr("web.grads.chart", lang), tr("web.grads.distance", lang), "|dL/dx_t|", true, {}, 480, 280};
  auto series = [&](const std::string& name, const inspect::GradProfile& p) {
    report::Series s{name, {}, {}};
    for (std::size_t t = 0; t < p.distance.size(); ++t) s.x.push_back(p.distance[t]), s.y.push_back(p.grad_norm_x[t]);
    line.series.push_back(s);
  };
  series(tr("web.grads.before", lang), profiles.front());
  if (profiles.size() > 1) series(text::trf("web.grads.now", lang, steps.back()), profiles.back());
  inspect::GradHeatmapWords words{tr("web.grads.heat_suffix", lang), tr("web.grads.distance", lang),
                                  tr("web.grads.heat_y", lang)};
  report::Heatmap heat = inspect::gradient_heatmap(model, steps, profiles, words);
  heat.width = 480, heat.height = 280;
  return json::array({report::svg(line), report::svg(heat)});
}

std::string progress_text(const train::StepLog& s, long total, text::Lang lang) {
  std::string t = text::trf("web.train.progress", lang, s.step, total, s.loss);
  if (s.accuracy) t += text::trf("web.train.accuracy", lang, 100 * *s.accuracy);
  return t;
}

json eval_json(const train::EvalResult& e) {
  json j = {{"sequences", e.sequences}, {"loss", e.loss}};
  if (e.token_acc) j["token_acc"] = *e.token_acc;
  if (e.seq_acc) j["seq_acc"] = *e.seq_acc;
  if (e.mse) j["mse"] = *e.mse;
  return j;
}

json train_model(const json& r, const Post& post) {
  const text::Lang lang = lang_field(r);
  const std::string kind = choice_field(r, "model", "transformer", nn::choices::kinds);
  tasks::TaskOptions task_options{choice_field(r, "task", "recall", tasks::task_names()),
                                  static_cast<int>(int_field(r, "len", 0, 0, 256)), "", ""};
  const int steps = static_cast<int>(int_field(r, "steps", 300, 1, 20000));
  const int d_model = static_cast<int>(int_field(r, "d_model", 64, 4, 256));
  const auto seed = static_cast<std::uint64_t>(int_field(r, "seed", 0, 0, std::int64_t{1} << 40));
  train::TrainConfig c = train::fresh_config(kind, task_options, d_model, steps, seed);
  c.model.attention = nn::choices::parse_attention(choice_field(r, "attention", "softmax", nn::choices::attentions));
  if (c.model.recurrent() && c.model.attention != nn::choices::Attention::softmax)
    throw std::invalid_argument(text::trf("web.attention_linear_recurrent", lang, kind));

  // The profile of the gradient on one held-out batch, 20 times over the run.
  const std::shared_ptr<tasks::Task> task = train::plan_run(c).task;
  const tasks::Batch probe = task->eval_batches(c.batch, c.batch, train::eval_seed(seed)).front();
  std::vector<long> profile_steps;
  std::vector<inspect::GradProfile> profiles;
  train::RunOptions o;
  o.task = task;  // made once
  o.inspect_every = std::max(1, steps / 20);
  o.inspect = [&](long step, const nn::SequenceModel& model) {
    profile_steps.push_back(step);
    profiles.push_back(inspect::gradient_profile(model, *task, probe));
    if (post) post({{"type", "grads"}, {"step", step}, {"charts", grads_charts(kind, profile_steps, profiles, lang)}});
  };
  // Progress at most five times a second, and at the last step.
  std::vector<train::StepLog> log;
  auto last_post = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  o.observer.on_step = [&](const train::StepLog& s, long total) {
    log.push_back(s);
    const auto now = std::chrono::steady_clock::now();
    if (!post || (now - last_post < std::chrono::milliseconds(200) && s.step != total)) return;
    last_post = now;
    json p = {{"type", "progress"}, {"step", s.step}, {"steps", total}, {"loss", s.loss}, {"elapsed", s.elapsed}};
    if (s.accuracy) p["accuracy"] = *s.accuracy;
    p["text"] = progress_text(s, total, lang);
    p["charts"] = progress_charts(log, lang);
    post(p);
  };
  const train::TrainResult result = train::run_training(c, o);
  const nn::SequenceModel& model = *result.model;

  json out = {{"type", "trained"},
              {"model", kind},
              {"task", result.task->info().name},
              {"len", result.task->info().len},
              {"seed", seed},
              {"steps", result.steps_done},
              {"params", result.params},
              {"seconds", result.seconds},
              {"ms_per_step", result.ms_per_step},
              {"first_loss", result.log.empty() ? 0.0 : result.log.front().loss},
              {"final_loss", result.log.empty() ? 0.0 : result.log.back().loss},
              {"eval", eval_json(result.eval)}};
  out["charts"] = progress_charts(result.log, lang);
  out["grads"] = grads_charts(kind, profile_steps, profiles, lang);
  json examples = json::array();
  for (const auto& x : train::show_examples(model, *result.task, 4, train::eval_seed(seed)))
    examples.push_back(
        {{"input", x.input}, {"prediction", x.prediction}, {"target", x.target}, {"correct", x.correct}});
  out["examples"] = examples;
  if (!model.config().recurrent()) {
    const inspect::AttentionMaps maps = inspect::attention_maps(model, *result.task, "", train::eval_seed(seed));
    const inspect::QueryRow row = inspect::query_row(maps, maps.answer_row);
    out["attention"] = inspect::attention_svgs(maps, row);  // in the request's language, as text::lang() is
    // The sentence that names the head, in both languages: the page says it again when the language changes.
    const std::string& query_token = maps.tokens.at(static_cast<std::size_t>(row.query));
    for (const text::Lang l : {text::Lang::en, text::Lang::ko}) {
      const std::string named = inspect::named_head(maps, row, l);
      out["attention_note"][std::string(text::to_string(l))] =
          row.key >= 0 ? text::trf("web.attention.note_key", l, row.query, query_token, row.key,
                                   maps.tokens.at(static_cast<std::size_t>(row.key)), named)
                       : text::trf("web.attention.note_any", l, row.query, query_token, named);
    }
    out["attention_named"] = {{"layer", row.named.layer},
                              {"head", row.named.head},
                              {"query", row.query},
                              {"key", row.key >= 0 ? json(row.key) : json(nullptr)},
                              {"on_key", row.named.on_key},
                              {"top", row.named.top},
                              {"top_weight", row.named.top_weight}};
  }
  const inspect::PathReport p = inspect::measure_paths(model, result.task->info().seq_len);
  out["paths"] = {
      {"len", p.len}, {"from_first", p.max_path()}, {"from_last", p.min_path()}, {"sequential_ops", p.sequential_ops}};
  return out;
}

// --- compare: the chapter's comparison, side by side ----------------------------------------

// The recurrent models beside the Transformer on recall, as `seqgrad compare`
// trains them (same data, seed and steps): their loss, the gradient reaching
// each position after training, the path length from x_0, and one line that
// says, from the figures, whether the chapter's prediction showed.
json compare(const json& r, const Post& post) {
  const text::Lang lang = lang_field(r);
  inspect::CompareConfig c;
  c.models.clear();
  if (r.contains("models")) {
    if (!r["models"].is_array() || r["models"].empty() || r["models"].size() > nn::choices::kinds.size())
      throw std::invalid_argument(text::msg("web.compare.models_bad"));
    for (const json& m : r["models"]) {
      const std::string name = choice_field({{"model", m}}, "model", "", nn::choices::kinds);
      if (std::find(c.models.begin(), c.models.end(), name) != c.models.end())
        throw std::invalid_argument(text::msg("web.compare.models_bad"));
      c.models.push_back(name);
    }
  } else {
    c.models = {"rnn", "lstm", "transformer"};
  }
  const bool has_transformer = std::count(c.models.begin(), c.models.end(), "transformer") == 1;
  if (!has_transformer || c.models.size() < 2) throw std::invalid_argument(text::msg("web.compare.models_bad"));
  c.task = {"recall", static_cast<int>(int_field(r, "len", 16, 4, 128)), "", ""};
  c.steps = static_cast<int>(int_field(r, "steps", 300, 1, 5000));
  c.d_model = static_cast<int>(int_field(r, "d_model", 64, 4, 256));
  c.seed = static_cast<std::uint64_t>(int_field(r, "seed", 0, 0, std::int64_t{1} << 40));
  c.eval_size = 256;
  c.snapshots = 2;  // before and after: the chart shows after
  c.path_lengths = {8, 16, 32, 64};
  c.validate();
  auto last_post = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  const auto observer_for = [&](const std::string& model) {
    train::TrainObserver o;
    o.on_step = [&, model](const train::StepLog& s, long total) {
      const auto now = std::chrono::steady_clock::now();
      if (!post || (now - last_post < std::chrono::milliseconds(200) && s.step != total)) return;
      last_post = now;
      post({{"type", "compare-progress"},
            {"model", model},
            {"step", s.step},
            {"steps", total},
            {"text", model + ": " + progress_text(s, total, lang)}});
    };
    return o;
  };
  const inspect::CompareResult result = inspect::run_compare(c, observer_for);

  report::LineChart loss{tr("web.compare.loss_chart", lang),
                         tr("web.chart.step", lang),
                         tr("web.chart.loss_axis", lang),
                         true,
                         {},
                         480,
                         280};
  report::LineChart grads{
      tr("web.compare.grads_chart", lang), tr("web.grads.distance", lang), "|dL/dx_t|", true, {}, 480, 280};
  report::LineChart paths{tr("web.compare.paths_chart", lang), "T", tr("web.paths.ops", lang), false, {}, 480, 280};
  json rows = json::array();
  const inspect::Contender* transformer = nullptr;
  const inspect::Contender* best_recurrent = nullptr;
  for (const inspect::Contender& k : result.contenders) {
    report::Series l{k.model, {}, {}}, g{k.model, {}, {}}, p{k.model, {}, {}};
    for (const train::StepLog& s : k.run.log) l.x.push_back(static_cast<double>(s.step)), l.y.push_back(s.loss);
    const inspect::GradProfile& after = k.snapshots.back();
    for (std::size_t t = 0; t < after.distance.size(); ++t)
      g.x.push_back(after.distance[t]), g.y.push_back(after.grad_norm_x[t]);
    for (const inspect::PathReport& pr : k.paths) p.x.push_back(pr.len), p.y.push_back(pr.max_path());
    loss.series.push_back(l), grads.series.push_back(g), paths.series.push_back(p);
    const double acc = k.run.eval.token_acc.value_or(0);
    rows.push_back({{"model", k.model},
                    {"params", k.run.params},
                    {"token_acc", acc},
                    {"final_loss", k.run.log.empty() ? 0.0 : k.run.log.back().loss},
                    {"grad_far_near", after.decay()},
                    {"path_from_first", k.paths.back().max_path()},
                    {"ms_per_step", k.run.ms_per_step}});
    if (k.model == "transformer")
      transformer = &k;
    else if (!best_recurrent || acc > best_recurrent->run.eval.token_acc.value_or(0))
      best_recurrent = &k;
  }
  // The verdict, from the held-out accuracies: the Transformer far ahead (the chapter's prediction), the
  // models close (the key is near enough to carry), or anything else (not shown at this budget).
  const double chance = 100 * result.info.chance;
  std::string verdict, kind;
  {
    const double t = 100 * transformer->run.eval.token_acc.value_or(0);
    const double b = 100 * best_recurrent->run.eval.token_acc.value_or(0);
    kind = t >= 90 && t - b >= 20 ? "attention" : std::abs(t - b) < 20 ? "close" : "other";
    verdict = text::trf("web.compare.verdict_" + kind, lang, result.info.len, t, best_recurrent->model, b, chance);
  }
  return {{"type", "compared"},   {"len", result.info.len},
          {"steps", c.steps},     {"chance", result.info.chance},
          {"rows", rows},         {"verdict", verdict},
          {"verdict_kind", kind}, {"charts", json::array({report::svg(loss), report::svg(grads), report::svg(paths)})}};
}

// --- paths, lab, bench -----------------------------------------------------------------------

json paths(const json& r) {
  const text::Lang lang = lang_field(r);
  const std::vector<int> lens{8, 16, 32, 64};
  const std::vector<inspect::PathReport> reports = inspect::measure_paths(nn::choices::kinds, lens, 0);
  report::LineChart chart{tr("web.paths.chart", lang), "T", tr("web.paths.ops", lang), false, {}, 480, 280};
  for (const std::string& kind : nn::choices::kinds) {
    report::Series s{kind, {}, {}};
    for (const inspect::PathReport& p : reports)
      if (p.model == kind) s.x.push_back(p.len), s.y.push_back(p.max_path());
    chart.series.push_back(s);
  }
  return {{"type", "paths"}, {"data", inspect::to_json(reports)}, {"chart", report::svg(chart)}};
}

json lab(const json& r) {
  const text::Lang lang = lang_field(r);
  const labs::Lab& l = labs::find_lab(string_field(r, "name", ""));
  const labs::LabResult result = l.run();
  return {
      {"type", "lab"},
      {"name", result.name},
      {"source", l.source},
      {"claim", labs::claim_text(l, lang)},
      {"figures", result.figures},
      {"lines", {{"en", result.lines_in(text::Lang::en)}, {"ko", result.lines_in(text::Lang::ko)}}},
      {"holds", result.holds},
      {"inconclusive", result.inconclusive},
      {"conditions",
       {{"en", labs::condition_lines(result, text::Lang::en)}, {"ko", labs::condition_lines(result, text::Lang::ko)}}},
      {"verdict_line",
       {{"en", labs::verdict_line(result, text::Lang::en)}, {"ko", labs::verdict_line(result, text::Lang::ko)}}},
      {"verdict", tr(result.holds          ? "web.labs.holds"
                     : result.inconclusive ? "web.labs.inconclusive"
                                           : "web.labs.fails",
                     lang)}};
}

json bench(const json& r) {
  const bench::Workload w = bench::find_workload(choice_field(r, "workload", "transformer", bench::workload_names()));
  const auto res = bench::run_workload(w, static_cast<int>(int_field(r, "steps", 10, 1, 1000)), 1);
  return {{"type", "bench"},      {"workload", res.workload}, {"steps", res.steps},  {"ms_median", res.ms_median},
          {"ms_p10", res.ms_p10}, {"ms_p90", res.ms_p90},     {"gflops", res.gflops}};
}

}  // namespace

json handle(const json& request, const Post& post) {
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string())
    throw std::invalid_argument("a request is a JSON object with a string 'cmd'");
  const std::string cmd = request["cmd"].get<std::string>();
  text::set_lang(
      lang_field(request));  // what the floors below say (a lab's refusal, a task's) is in the page's language
  if (cmd == "hello") return hello();
  if (cmd == "train") return train_model(request, post);
  if (cmd == "compare") return compare(request, post);
  if (cmd == "paths") return paths(request);
  if (cmd == "lab") return lab(request);
  if (cmd == "bench") return bench(request);
  throw std::invalid_argument("unknown cmd '" + cmd + "'; expected hello, train, compare, paths, lab or bench");
}

std::string handle_text(const std::string& request, const Post& post) {
  try {
    return handle(json::parse(request), post).dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return json{{"error", e.what()}}.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

}  // namespace seqgrad::web
