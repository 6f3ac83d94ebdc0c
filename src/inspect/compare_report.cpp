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
#include "src/report/terminal.h"
#include "src/text/catalogue.h"

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
    return text::msg("inspect.compare.widths", widths);
  }
  const auto [small, large] =
      std::minmax_element(r.contenders.begin(), r.contenders.end(),
                          [](const Contender& a, const Contender& b) { return a.run.params < b.run.params; });
  const double ratio = static_cast<double>(large->run.params) / static_cast<double>(small->run.params);
  if (ratio < 1.5) return "";
  return text::msg("inspect.compare.sizes", large->model, ratio, small->model, r.config.d_model);
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
  std::string text = fmt::format("\n{}\n", text::msg("inspect.compare.heading", r.info.name, r.info.len, r.config.steps,
                                                     r.config.batch, r.config.seed));
  // The sequence accuracy (or MSE) column only where some model has one: recall has neither.
  bool second = false;
  for (const Contender& c : r.contenders) second = second || c.run.eval.seq_acc || c.run.eval.mse;
  const std::string second_name = r.info.regression ? "MSE" : text::msg("inspect.compare.seq_acc");
  // Each column as wide as its English heading allows, wider where a heading in another language is longer, with
  // two spaces at least between headings (Korean ones, several words each, would otherwise read as one phrase).
  const std::string heads[] = {text::msg("inspect.compare.model"),
                               text::msg("inspect.compare.params"),
                               text::msg("inspect.compare.eval_loss"),
                               text::msg("inspect.compare.token_acc"),
                               second_name,
                               text::msg("inspect.compare.far_near"),
                               text::msg("inspect.compare.path"),
                               text::msg("inspect.compare.mflop")};
  std::size_t w[] = {12, 8, 10, 10, 10, 14, 10, 10};
  for (std::size_t k = 0; k < std::size(w); ++k) w[k] = std::max(w[k], report::display_width(heads[k]) + (k ? 1 : 0));
  // The step time last, with its unit: the one figure that changes from run to run.
  text += fmt::format("{:<{}} {:>{}} {:>{}} {:>{}}{} {:>{}} {:>{}} {:>{}}  {}\n", heads[0], w[0], heads[1], w[1],
                      heads[2], w[2], heads[3], w[3], second ? fmt::format(" {:>{}}", heads[4], w[4]) : "", heads[5],
                      w[5], heads[6], w[6], heads[7], w[7], text::msg("inspect.compare.step_time"));
  for (const Contender& c : r.contenders) {
    const train::EvalResult& e = c.run.eval;
    text += fmt::format("{:<{}} {:>{}} {:>{}.4f} {:>{}}{} {:>{}.3g} {:>{}} {:>{}.1f}  {:.2f} ms\n", c.model, w[0],
                        c.run.params, w[1], e.loss, w[2], fmt_acc(e.token_acc), w[3],
                        second ? fmt::format(" {:>{}}", fmt_acc(e.seq_acc ? e.seq_acc : e.mse), w[4]) : "",
                        c.snapshots.front().decay(), w[5], c.paths.back().max_path(), w[6], c.flops_per_step / 1e6,
                        w[7], c.run.ms_per_step);
  }
  text += fmt::format("  {}\n  {}\n", text::msg("inspect.compare.chance", r.info.chance_text),
                      text::msg("inspect.compare.far_near_note"));
  text += fmt::format("  {}\n", text::msg("inspect.compare.path_note", r.config.path_lengths.back()));
  if (const std::string note = size_note(r); !note.empty()) text += "  " + note + "\n";
  // Why a Transformer can be slower per step with a far shorter chain: the rate of its products beside the others'.
  std::string rates;
  for (const Contender& c : r.contenders)
    if (c.run.ms_per_step > 0)
      rates += fmt::format("{}{} {:.1f} GFLOP/s", rates.empty() ? "" : ", ", c.model,
                           c.flops_per_step / 1e6 / c.run.ms_per_step);
  if (!rates.empty()) text += fmt::format("  {}\n", text::msg("inspect.compare.rates", rates));
  return text;
}

std::string write_report(const CompareResult& r, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  io::write_file((fs::path(dir) / "data.json").string(), to_json(r).dump(2) + "\n");

  report::Page page;
  page.title = text::msg("inspect.report.title", r.info.name, r.info.len);
  const std::string sizes = size_note(r);
  page.subtitle = text::msg("inspect.report.subtitle", r.config.seed, r.config.steps, r.config.batch, r.config.d_model,
                            r.info.input, r.info.target, r.info.scored, r.info.chance_text,
                            sizes.empty() ? "" : text::msg("inspect.report.sizes", sizes));

  // Summary
  report::Table summary{{text::msg("inspect.compare.model"), text::msg("inspect.compare.params"),
                         text::msg("inspect.report.final_loss"), text::msg("inspect.compare.eval_loss"),
                         text::msg("inspect.compare.token_acc"), text::msg("inspect.compare.seq_acc"), "MSE",
                         text::msg("inspect.report.far_near_before"), text::msg("inspect.report.far_near_after"),
                         text::msg("inspect.paths.from_first"), text::msg("inspect.paths.sequential"),
                         text::msg("inspect.report.ms_step"), text::msg("inspect.report.mflop_step")},
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
  page.sections.push_back(
      {text::msg("inspect.report.summary"), text::msg("inspect.report.summary_text"), {}, {summary}});

  // Loss curves and accuracy by distance
  report::LineChart loss_chart{text::msg("inspect.report.loss_chart"),
                               text::msg("inspect.report.step"),
                               text::msg("inspect.report.loss"),
                               true,
                               {}};
  report::LineChart acc_chart{text::msg("inspect.report.acc_chart"),
                              text::msg("inspect.report.acc_x"),
                              text::msg("inspect.report.accuracy"),
                              false,
                              {}};
  std::string grads_csv = "model,phase,distance,grad_norm_x\n";
  report::LineChart before{
      text::msg("inspect.report.before"), text::msg("inspect.grads.distance"), "|dL/dx_t|", true, {}};
  report::LineChart after{
      text::msg("inspect.report.after"), text::msg("inspect.grads.distance"), "|dL/dx_t|", true, {}};
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
  page.sections.push_back({text::msg("inspect.report.learning"),
                           text::msg("inspect.report.learning_text"),
                           {report::svg(loss_chart), report::svg(acc_chart)},
                           {}});
  page.sections.push_back({text::msg("inspect.report.reaching"),
                           text::msg("inspect.report.reaching_text"),
                           {report::svg(before), report::svg(after)},
                           {}});

  // Heatmaps of the gradient over training
  report::Section heat{
      text::msg("inspect.report.over_training"), text::msg("inspect.report.over_training_text"), {}, {}};
  for (const Contender& c : r.contenders) {
    heat.svgs.push_back(report::svg(gradient_heatmap(c.model, c.snapshot_steps, c.snapshots)));
  }
  page.sections.push_back(heat);

  // The RNN's chain of Jacobians
  for (const Contender& c : r.contenders) {
    if (c.chains.empty()) continue;
    report::LineChart chart{text::msg("inspect.report.chain_chart"),
                            text::msg("inspect.report.chain_x"),
                            text::msg("inspect.report.chain_y"),
                            true,
                            {}};
    // What the figures show, line by line: whether the product ends below or above where it began.
    std::string fate;
    for (const auto& ch : c.chains)
      fate +=
          fmt::format("{}{}", fate.empty() ? "" : ", ",
                      text::msg(ch.norm.back() < ch.norm.front() ? "inspect.report.vanishes" : "inspect.report.grows",
                                chain_label(ch.label)));
    std::string text = text::msg("inspect.report.chain_text", fate);
    for (const auto& ch : c.chains) {
      report::Series s{
          text::msg("inspect.report.chain_series", chain_label(ch.label), ch.spectral_radius, ch.spectral_norm),
          {},
          {}};
      for (std::size_t k = 0; k < ch.norm.size(); ++k)
        s.x.push_back(static_cast<double>(k + 1)), s.y.push_back(ch.norm[k]);
      chart.series.push_back(s);
    }
    page.sections.push_back({text::msg("inspect.report.chain_heading"), text, {report::svg(chart)}, {}});
  }

  // Attention: every layer, from the row where the answer is read; the head that looks at the key first
  for (const Contender& c : r.contenders) {
    if (!c.attention) continue;
    const AttentionMaps& maps = *c.attention;
    const QueryRow row = query_row(maps, maps.answer_row);
    const std::string named = named_head(maps, row, text::lang());
    const std::string& query_token = maps.tokens.at(static_cast<std::size_t>(row.query));
    report::Section att{text::msg("inspect.report.attention_heading", c.model),
                        row.key >= 0 ? text::msg("inspect.report.attention_key", row.query, query_token, row.key,
                                                 maps.tokens.at(static_cast<std::size_t>(row.key)), named)
                                     : text::msg("inspect.report.attention_any", row.query, query_token, named),
                        attention_svgs(maps, row),
                        {}};
    report::Table heads{{text::msg("inspect.report.attention_layer"), text::msg("inspect.report.attention_head")},
                        {},
                        "attention-heads"};
    if (row.key >= 0) heads.header.push_back(text::msg("inspect.report.attention_on_key"));
    heads.header.push_back(text::msg("inspect.report.attention_top"));
    heads.header.push_back(text::msg("inspect.report.attention_top_weight"));
    for (const HeadLook& h : row.heads) {
      std::vector<std::string> cells{std::to_string(h.layer), std::to_string(h.head)};
      if (row.key >= 0) cells.push_back(fmt::format("{:.2f}", h.on_key));
      cells.push_back(fmt::format("{} ('{}')", h.top, maps.tokens.at(static_cast<std::size_t>(h.top))));
      cells.push_back(fmt::format("{:.2f}", h.top_weight));
      heads.rows.push_back(std::move(cells));
    }
    att.tables.push_back(std::move(heads));
    page.sections.push_back(std::move(att));
  }

  // Path lengths, beside the paper's Table 1
  report::Table paths{{text::msg("inspect.compare.model")}, {}, "paths"};
  std::string paths_csv = "model,T,path_from_first,path_from_last,sequential_ops\n";
  for (int len : r.config.path_lengths) paths.header.push_back(text::msg("inspect.report.paths_column", len));
  paths.header.push_back(text::msg("inspect.report.paper"));
  for (const Contender& c : r.contenders) {
    std::vector<std::string> row{c.model};
    for (const auto& p : c.paths) {
      row.push_back(fmt::format("{} / {}", p.max_path(), p.sequential_ops));
      paths_csv += fmt::format("{},{},{},{},{}\n", c.model, p.len, p.max_path(), p.min_path(), p.sequential_ops);
    }
    row.push_back(
        text::msg(c.model == "transformer" ? "inspect.report.paper_attention" : "inspect.report.paper_recurrent"));
    paths.rows.push_back(row);
  }
  io::write_file((fs::path(dir) / "paths.csv").string(), paths_csv);
  page.sections.push_back(
      {text::msg("inspect.report.paths_heading"), text::msg("inspect.report.paths_text"), {}, {paths}});

  const std::string path = (fs::path(dir) / "report.html").string();
  io::write_file(path, report::html(page));
  return path;
}

}  // namespace seqgrad::inspect
