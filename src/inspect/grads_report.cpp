#include "src/inspect/grads_report.h"

#include <fmt/core.h>

#include "src/report/terminal.h"
#include "src/text/catalogue.h"
#include "src/train/checkpoint.h"
#include "src/train/config.h"
#include "src/train/run.h"

namespace seqgrad::inspect {

// A loss at the last position below this is near zero: the model has learned the position, and every gradient
// into it is small for that reason.
constexpr double kNearZeroLoss = 0.05;

GradsReport run_grads(const GradsConfig& g,
                      const std::function<train::TrainObserver(const std::string&)>& observer_for) {
  GradsReport report;
  report.batch = g.batch;
  const std::vector<std::string> kinds = g.checkpoint.empty() ? g.models : std::vector<std::string>{""};
  for (const std::string& kind : kinds) {
    std::shared_ptr<nn::SequenceModel> model;
    std::shared_ptr<tasks::Task> task;
    train::TrainConfig c;
    ModelGrads m;
    if (!g.checkpoint.empty()) {
      train::Checkpoint ck = train::load_checkpoint(g.checkpoint);
      c = ck.config;
      m.step = ck.step;
      model = std::move(ck.model);
      task = std::move(ck.task);
    } else {
      c = train::fresh_config(kind, g.task, g.d_model, g.steps, g.seed);
      c.model.init = g.init;
      c.batch = g.batch;
      train::Run planned = train::plan_run(c);
      c = planned.config;
      task = planned.task;
    }
    report.task = task->info().name;
    report.len = task->info().len;
    const tasks::Batch probe = task->eval_batches(g.batch, g.batch, train::eval_seed(c.seed)).front();
    m.model = c.model.kind;
    m.recurrent = c.model.recurrent();
    if (g.every > 0) {  // the profile every K steps while training: a heatmap of step by position
      train::RunOptions o;
      o.inspect_every = g.every;
      o.inspect = [&](long step, const nn::SequenceModel& trained) {
        m.heat_steps.push_back(step);
        m.heat_rows.push_back(gradient_profile(trained, *task, probe).grad_norm_x);
      };
      o.observer = observer_for(text::msg("inspect.grads.run", c.model.kind, task->info().name));
      o.task = task;
      model = train::run_training(c, o).model;
      m.step = c.steps;
    } else if (!model) {
      model = train::make_run(c, task).model;
    }
    m.profile = gradient_profile(*model, *task, probe);
    if (c.model.kind == "rnn") m.chains = jacobian_chains(*model, probe, {0.5, 1.0, 1.5});
    report.models.push_back(std::move(m));
  }
  return report;
}

nlohmann::json to_json(const GradsReport& r) {
  nlohmann::json out = {{"models", nlohmann::json::array()}, {"task", r.task}, {"len", r.len}};
  for (const ModelGrads& m : r.models) {
    nlohmann::json j = {{"model", m.model},
                        {"task", r.task},
                        {"len", r.len},
                        {"distance", m.profile.distance},
                        {"grad_norm_x", m.profile.grad_norm_x},
                        {"decay", m.profile.decay()},
                        {"loss", m.profile.loss},
                        {"step", m.step}};
    if (!m.heat_steps.empty()) j["heatmap"] = {{"steps", m.heat_steps}, {"grad_norm_x", m.heat_rows}};
    if (m.recurrent) j["grad_norm_h"] = m.profile.grad_norm_h;
    for (const auto& ch : m.chains) {
      j["jacobian_chains"].push_back({{"label", ch.label},
                                      {"spectral_radius", ch.spectral_radius},
                                      {"spectral_norm", ch.spectral_norm},
                                      {"norm", ch.norm}});
    }
    out["models"].push_back(j);
  }
  return out;
}

std::string to_csv(const GradsReport& r) {
  std::string csv = "model,distance,grad_norm_x\n";
  for (const ModelGrads& m : r.models)
    for (std::size_t t = 0; t < m.profile.distance.size(); ++t)
      csv += fmt::format("{},{},{:.6g}\n", m.model, m.profile.distance[t], m.profile.grad_norm_x[t]);
  return csv;
}

std::string to_text(const GradsReport& r, bool colour) {
  std::string text;
  for (const ModelGrads& m : r.models) {
    if (m.heat_steps.empty()) continue;
    std::vector<std::string> labels;
    for (long s : m.heat_steps) labels.push_back(text::msg("inspect.grads.step", s));
    text += fmt::format("{}\n{}\n", text::msg("inspect.grads.heat", m.model),
                        report::terminal_heatmap(m.heat_rows, labels, true, colour));
  }
  text += text::msg("inspect.grads.intro", r.task, r.len, r.batch) + "\n\n";
  std::vector<report::Series> series;
  for (const ModelGrads& m : r.models) {
    report::Series s{m.model, {}, m.profile.grad_norm_x};
    for (int d : m.profile.distance) s.x.push_back(d);
    series.push_back(s);
  }
  text += fmt::format("{}\n", report::terminal_log_chart(series, text::msg("inspect.grads.distance"), "|dL/dx_t|"));
  for (const ModelGrads& m : r.models) {
    text += fmt::format("{}\n", text::msg("inspect.grads.line", m.model, m.profile.grad_norm_x.back(),
                                          m.profile.grad_norm_x.front(), m.profile.decay()));
  }
  // When the chart was taken, and at what loss: after training a gradient can be small everywhere because little
  // is left to learn, which is not the fading with distance the chapter speaks of.
  for (const ModelGrads& m : r.models) {
    text += "  " + (m.step > 0 ? text::msg("inspect.grads.after", m.model, m.step, m.profile.loss)
                               : text::msg("inspect.grads.before", m.model, m.profile.loss));
    text += "\n";
    if (m.step > 0 && m.profile.loss < kNearZeroLoss)
      text += "  " + text::msg("inspect.grads.near_zero", m.model) + "\n";
  }
  for (const ModelGrads& m : r.models) {
    if (m.chains.empty()) continue;
    text += fmt::format("\n{}\n{:<14}{:>7}{:>7}", text::msg("inspect.grads.chain"), "W_h", "rho", "sigma");
    const std::size_t longest = m.chains.front().norm.size();
    std::vector<std::size_t> ks;
    for (std::size_t k = 1; k <= longest; k *= 2) ks.push_back(k);
    if (ks.back() != longest) ks.push_back(longest);
    for (std::size_t k : ks) text += fmt::format("{:>10}", fmt::format("k={}", k));
    text += "\n";
    for (const auto& ch : m.chains) {
      text += fmt::format("{:<14}{:>7.2f}{:>7.2f}", chain_label(ch.label), ch.spectral_radius, ch.spectral_norm);
      for (std::size_t k : ks) text += fmt::format("{:>10.2e}", ch.norm[k - 1]);
      text += "\n";
    }
  }
  return text;
}

report::LineChart gradient_chart(const GradsReport& report) {
  // "before training" or "after 400 steps" (the models of one report are all trained alike)
  const long step = report.models.empty() ? 0 : report.models.front().step;
  const std::string when =
      step > 0 ? text::msg("inspect.grads.chart_after", step) : text::msg("inspect.grads.chart_before");
  report::LineChart chart{text::msg("inspect.grads.chart", report.task, report.len) + when,
                          text::msg("inspect.grads.chart_x"),
                          "|dL/dx_t|",
                          true,
                          {},
                          600,
                          360};
  for (const ModelGrads& m : report.models) {
    report::Series s{m.model, {}, {}};
    for (std::size_t t = 0; t < m.profile.distance.size(); ++t) {
      s.x.push_back(m.profile.distance[t]);
      s.y.push_back(m.profile.grad_norm_x[t]);
    }
    chart.series.push_back(std::move(s));
  }
  return chart;
}

}  // namespace seqgrad::inspect
