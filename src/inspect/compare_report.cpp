// The compare result as JSON, CSV and a self-contained HTML report. Every
// number on the page is formatted from the same struct that data.json holds.
#include <fmt/core.h>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "src/inspect/charts.h"
#include "src/inspect/compare.h"
#include "src/io/files.h"
#include "src/report/html.h"
#include "src/report/svg.h"

namespace seqgrad::inspect {

namespace {

nlohmann::json profile_json(const GradProfile& p) {
  return {{"distance", p.distance},
          {"grad_norm_x", p.grad_norm_x},
          {"grad_norm_h", p.grad_norm_h},
          {"loss", p.loss},
          {"decay", p.decay()}};
}

// Removes the columns in which no row has a figure ("-" everywhere: the
// sequence accuracy and MSE on recall), so that the page shows no empty column.
void drop_empty_columns(report::Table& t) {
  if (t.rows.empty()) return;
  for (std::size_t k = t.header.size(); k-- > 0;) {
    if (!std::all_of(t.rows.begin(), t.rows.end(), [k](const auto& row) { return row[k] == "-"; })) continue;
    t.header.erase(t.header.begin() + static_cast<long>(k));
    for (auto& row : t.rows) row.erase(row.begin() + static_cast<long>(k));
  }
}

// The figures of the summary table, in the order of its columns. The report
// and the tests both read them from here.
std::string fmt_acc(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : "-"; }

// One sentence on the models' sizes: how far apart they are, or, with
// --match-params, the widths that made them alike.
std::string size_note(const CompareResult& r) {
  if (r.contenders.size() < 2) return "";
  if (r.config.match_params) {
    std::string widths;
    for (const Contender& c : r.contenders)
      widths += fmt::format("{}{} {}", widths.empty() ? "" : ", ", c.model, c.d_model);
    return fmt::format("widths {}: each recurrent model sized to the Transformer's parameter count (--match-params)",
                       widths);
  }
  const auto [small, large] =
      std::minmax_element(r.contenders.begin(), r.contenders.end(),
                          [](const Contender& a, const Contender& b) { return a.run.params < b.run.params; });
  const double ratio = static_cast<double>(large->run.params) / static_cast<double>(small->run.params);
  if (ratio < 1.5) return "";
  return fmt::format(
      "sizes differ: {} has {:.1f} times the parameters of {} at one width (d_model {}); "
      "--match-params sizes each recurrent model to the Transformer's count",
      large->model, ratio, small->model, r.config.d_model);
}

}  // namespace

nlohmann::json to_json(const CompareResult& r) {
  nlohmann::json j = {{"task", r.info.name},
                      {"len", r.info.len},
                      {"steps", r.config.steps},
                      {"batch", r.config.batch},
                      {"d_model", r.config.d_model},
                      {"match_params", r.config.match_params},
                      {"seed", r.config.seed},
                      {"chance", r.info.chance},
                      {"chance_metric", r.info.chance_metric},
                      {"models", nlohmann::json::array()}};
  for (const Contender& c : r.contenders) {
    nlohmann::json m = {
        {"model", c.model},
        {"d_model", c.d_model},
        {"params", c.run.params},
        {"ms_per_step", c.run.ms_per_step},
        {"flops_per_step", c.flops_per_step},
        {"final_train_loss", c.run.log.empty() ? 0.0 : c.run.log.back().loss},
        {"eval_loss", c.run.eval.loss},
        {"eval_token_acc", c.run.eval.token_acc ? nlohmann::json(*c.run.eval.token_acc) : nlohmann::json(nullptr)},
        {"eval_seq_acc", c.run.eval.seq_acc ? nlohmann::json(*c.run.eval.seq_acc) : nlohmann::json(nullptr)},
        {"eval_mse", c.run.eval.mse ? nlohmann::json(*c.run.eval.mse) : nlohmann::json(nullptr)},
        {"grad_decay_before", c.snapshots.front().decay()},
        {"grad_decay_after", c.snapshots.back().decay()},
        {"grads_before", profile_json(c.snapshots.front())},
        {"grads_after", profile_json(c.snapshots.back())},
        {"snapshot_steps", c.snapshot_steps}};
    nlohmann::json heat = nlohmann::json::array();
    for (const auto& s : c.snapshots) heat.push_back(s.grad_norm_x);
    m["grad_heatmap"] = heat;
    nlohmann::json loss = nlohmann::json::array();
    for (const auto& s : c.run.log) loss.push_back(s.loss);
    m["loss_curve"] = loss;
    for (const auto& p : c.accuracy_by_distance)
      m["accuracy_by_distance"].push_back({{"distance", p.distance}, {"accuracy", p.accuracy}, {"count", p.count}});
    for (const auto& p : c.paths) {
      m["paths"].push_back({{"T", p.len},
                            {"path_from_first", p.max_path()},
                            {"path_from_last", p.min_path()},
                            {"path_from", p.path_from},
                            {"sequential_ops", p.sequential_ops}});
    }
    for (const auto& ch : c.chains)
      m["jacobian_chains"].push_back({{"label", ch.label},
                                      {"spectral_radius", ch.spectral_radius},
                                      {"spectral_norm", ch.spectral_norm},
                                      {"norm", ch.norm}});
    j["models"].push_back(m);
  }
  return j;
}

std::string to_text(const CompareResult& r) {
  std::string text = fmt::format("\n{} (len {}), {} steps of batch {}, seed {}\n", r.info.name, r.info.len,
                                 r.config.steps, r.config.batch, r.config.seed);
  // The sequence accuracy (or MSE) column only where some model has one: recall has neither.
  bool second = false;
  for (const Contender& c : r.contenders) second = second || c.run.eval.seq_acc || c.run.eval.mse;
  const std::string second_name = r.info.regression ? "MSE" : "seq acc";
  // The step time last, with its unit: the one figure that changes from run to run.
  text += fmt::format("{:<12} {:>8} {:>10} {:>10}{} {:>14} {:>10} {:>10}  {}\n", "model", "params", "eval loss",
                      "token acc", second ? fmt::format(" {:>10}", second_name) : "", "grad far/near", "path x_0",
                      "MFLOP/st", "step time");
  for (const Contender& c : r.contenders) {
    const train::EvalResult& e = c.run.eval;
    text += fmt::format(
        "{:<12} {:>8} {:>10.4f} {:>10}{} {:>14.3g} {:>10} {:>10.1f}  {:.2f} ms\n", c.model, c.run.params, e.loss,
        fmt_acc(e.token_acc), second ? fmt::format(" {:>10}", fmt_acc(e.seq_acc ? e.seq_acc : e.mse)) : "",
        c.snapshots.front().decay(), c.paths.back().max_path(), c.flops_per_step / 1e6, c.run.ms_per_step);
  }
  text +=
      fmt::format("  chance: {}\n  grad far/near: |dL/dx| at the farthest position over the nearest, before training\n",
                  r.info.chance_text);
  text += fmt::format(
      "  path x_0: operations on the graph from the first input to the last output, over the T = {} "
      "positions of a sequence\n",
      r.config.path_lengths.back());
  if (const std::string note = size_note(r); !note.empty()) text += "  " + note + "\n";
  // Why a Transformer can be slower per step with a far shorter chain: the rate of its products beside the others'.
  std::string rates;
  for (const Contender& c : r.contenders)
    if (c.run.ms_per_step > 0)
      rates += fmt::format("{}{} {:.1f} GFLOP/s", rates.empty() ? "" : ", ", c.model,
                           c.flops_per_step / 1e6 / c.run.ms_per_step);
  if (!rates.empty())
    text += "  step time: this machine's; the matrix products ran at " + rates +
            " (a recurrent model does one small product per time step, one after another; seqgrad lab "
            "sequential-time)\n";
  return text;
}

std::string write_report(const CompareResult& r, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  io::write_file((fs::path(dir) / "data.json").string(), to_json(r).dump(2) + "\n");

  report::Page page;
  page.title = fmt::format("RNN against attention on {} (len {})", r.info.name, r.info.len);
  const std::string sizes = size_note(r);
  page.subtitle = fmt::format(
      "Same task, data, seed ({}) and budget: {} steps of batch {}, d_model {}. Task: {}; target: {}; scored: {}. "
      "Chance: {}.{}",
      r.config.seed, r.config.steps, r.config.batch, r.config.d_model, r.info.input, r.info.target, r.info.scored,
      r.info.chance_text, sizes.empty() ? "" : " The " + sizes + ".");

  // Summary
  report::Table summary{
      {"model", "params", "final train loss", "eval loss", "token acc", "seq acc", "MSE", "grad far/near before",
       "grad far/near after", "path from x_0", "sequential ops", "ms/step", "MFLOP/step"},
      {},
      "summary"};
  std::string csv =
      "model,params,final_train_loss,eval_loss,eval_token_acc,eval_seq_acc,eval_mse,grad_decay_before,grad_decay_after,"
      "path_from_first,sequential_ops,ms_per_step,flops_per_step\n";
  for (const Contender& c : r.contenders) {
    const PathReport& longest = c.paths.back();
    std::vector<std::string> row{c.model,
                                 std::to_string(c.run.params),
                                 fmt::format("{:.4f}", c.run.log.empty() ? 0.0 : c.run.log.back().loss),
                                 fmt::format("{:.4f}", c.run.eval.loss),
                                 fmt_acc(c.run.eval.token_acc),
                                 fmt_acc(c.run.eval.seq_acc),
                                 fmt_acc(c.run.eval.mse),
                                 fmt::format("{:.3g}", c.snapshots.front().decay()),
                                 fmt::format("{:.3g}", c.snapshots.back().decay()),
                                 fmt::format("{} (T = {})", longest.max_path(), longest.len),
                                 std::to_string(longest.sequential_ops),
                                 fmt::format("{:.2f}", c.run.ms_per_step),
                                 fmt::format("{:.1f}", c.flops_per_step / 1e6)};
    summary.rows.push_back(row);
    for (std::size_t k = 0; k < row.size(); ++k) csv += (k ? "," : "") + row[k];
    csv += "\n";
  }
  io::write_file((fs::path(dir) / "summary.csv").string(),
                 csv);  // every column, so that its shape does not depend on the task
  drop_empty_columns(summary);
  page.sections.push_back({"Summary",
                           "grad far/near: the norm of dL/dx_t at the farthest position over that at the nearest, with "
                           "the loss taken at the last "
                           "position; a vanishing gradient shows as a tiny ratio. Path from x_0: the fewest ops from "
                           "the first input to the last "
                           "output, measured on the autograd graph.",
                           {},
                           {summary}});

  // Loss curves and accuracy by distance
  report::LineChart loss_chart{"Training loss", "step", "loss", true, {}};
  report::LineChart acc_chart{"Accuracy against distance", "distance to the needed token", "accuracy", false, {}};
  std::string grads_csv = "model,phase,distance,grad_norm_x\n";
  report::LineChart before{"dL/dx_t before training", "distance to the loss position", "|dL/dx_t|", true, {}};
  report::LineChart after{"dL/dx_t after training", "distance to the loss position", "|dL/dx_t|", true, {}};
  for (const Contender& c : r.contenders) {
    report::Series s{c.model, {}, {}};
    for (const auto& row : c.run.log) s.x.push_back(static_cast<double>(row.step)), s.y.push_back(row.loss);
    loss_chart.series.push_back(s);
    report::Series a{c.model, {}, {}};
    for (const auto& p : c.accuracy_by_distance) a.x.push_back(p.distance), a.y.push_back(p.accuracy);
    acc_chart.series.push_back(a);
    for (auto [chart, profile, phase] :
         {std::tuple{&before, &c.snapshots.front(), "before"}, std::tuple{&after, &c.snapshots.back(), "after"}}) {
      report::Series g{c.model, {}, {}};
      for (std::size_t t = 0; t < profile->distance.size(); ++t) {
        g.x.push_back(profile->distance[t]);
        g.y.push_back(profile->grad_norm_x[t]);
        grads_csv += fmt::format("{},{},{},{:.6g}\n", c.model, phase, profile->distance[t], profile->grad_norm_x[t]);
      }
      chart->series.push_back(g);
    }
  }
  io::write_file((fs::path(dir) / "grads.csv").string(), grads_csv);
  page.sections.push_back(
      {"Learning",
       "Training loss per step, and held-out accuracy against the distance between the answer and the token it needs.",
       {report::svg(loss_chart), report::svg(acc_chart)},
       {}});
  page.sections.push_back({"The gradient reaching each position",
                           "The chapter's first wall: the gradient to a distant word is a product of one Jacobian per "
                           "step and dies on the way "
                           "through the recurrence; attention reaches every position in one step.",
                           {report::svg(before), report::svg(after)},
                           {}});

  // Heatmaps of the gradient over training
  report::Section heat{"The gradient over training",
                       "Each row is a training step, each column a distance; colour is |dL/dx_t| on a log scale.",
                       {},
                       {}};
  for (const Contender& c : r.contenders) {
    heat.svgs.push_back(report::svg(gradient_heatmap(c.model, c.snapshot_steps, c.snapshots)));
  }
  page.sections.push_back(heat);

  // The RNN's chain of Jacobians
  for (const Contender& c : r.contenders) {
    if (c.chains.empty()) continue;
    report::LineChart chart{"RNN: ||dh_T / dh_(T-k)|| against k", "k (steps back)", "norm of the product", true, {}};
    // What the figures show, line by line: whether the product ends below or above where it began.
    std::string fate;
    for (const auto& ch : c.chains)
      fate += fmt::format("{}{} {}", fate.empty() ? "" : ", ", ch.label,
                          ch.norm.back() < ch.norm.front() ? "vanishes" : "grows");
    std::string text = fmt::format(
        "The product of k Jacobians diag(1 - h^2) W_h^T. One step stretches a vector by at most the largest singular "
        "value of W_h (sigma, the spectral norm); over many steps the product shrinks or grows at the rate of its "
        "spectral radius rho (the largest |eigenvalue|), and tanh's 1 - h^2 < 1 pulls it down further. So a line may "
        "rise at first with rho below one, and vanish in the end with rho above one once tanh saturates. Here: {}. ",
        fate);
    for (const auto& ch : c.chains) {
      report::Series s{
          fmt::format("{} (rho {:.2f}, sigma {:.2f})", ch.label, ch.spectral_radius, ch.spectral_norm), {}, {}};
      for (std::size_t k = 0; k < ch.norm.size(); ++k)
        s.x.push_back(static_cast<double>(k + 1)), s.y.push_back(ch.norm[k]);
      chart.series.push_back(s);
    }
    page.sections.push_back({"Why: the chain of the chapter", text, {report::svg(chart)}, {}});
  }

  // Attention maps
  for (const Contender& c : r.contenders) {
    if (!c.attention) continue;
    const std::string last_token = c.attention->tokens.empty() ? "" : c.attention->tokens.back();
    report::Section att{"Attention maps (" + c.model + ", last layer)",
                        fmt::format("Rows are queries, columns keys; the first held-out sequence. The row that "
                                    "decides the answer, the last query ('{}'), is one thin row of each map: it is "
                                    "drawn again below, a line per head, its weight on every key position.",
                                    last_token),
                        {},
                        {}};
    att.svgs = attention_svgs(*c.attention, c.attention->weights.size() - 1);
    page.sections.push_back(att);
  }

  // Path lengths, beside the paper's Table 1
  report::Table paths{{"model"}, {}, "paths"};
  std::string paths_csv = "model,T,path_from_first,path_from_last,sequential_ops\n";
  for (int len : r.config.path_lengths)
    paths.header.push_back(fmt::format("T = {}: path from x_0 / sequential ops", len));
  paths.header.push_back("paper, Table 1");
  for (const Contender& c : r.contenders) {
    std::vector<std::string> row{c.model};
    for (const auto& p : c.paths) {
      row.push_back(fmt::format("{} / {}", p.max_path(), p.sequential_ops));
      paths_csv += fmt::format("{},{},{},{},{}\n", c.model, p.len, p.max_path(), p.min_path(), p.sequential_ops);
    }
    row.push_back(c.model == "transformer" ? "O(1) path, O(1) sequential" : "O(n) path, O(n) sequential");
    paths.rows.push_back(row);
  }
  io::write_file((fs::path(dir) / "paths.csv").string(), paths_csv);
  page.sections.push_back({"Path length, measured on the graph",
                           "The fewest ops between the first input and the output at the last position, and the "
                           "longest chain of ops that must "
                           "run one after another, counted by a search over the recorded autograd graph.",
                           {},
                           {paths}});

  const std::string path = (fs::path(dir) / "report.html").string();
  io::write_file(path, report::html(page));
  return path;
}

}  // namespace seqgrad::inspect
