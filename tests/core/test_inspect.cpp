// Looking inside: gradient profiles, path lengths, attention maps and the report.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include "seqgrad_catch.hpp"

#include <fmt/core.h>

#include "../temp_path.h"
#include "src/inspect/compare.h"
#include "src/report/svg.h"
#include "src/train/config.h"

using namespace seqgrad;

namespace {
std::unique_ptr<nn::SequenceModel> fresh(const std::string& kind, const tasks::Task& task) {
  train::TrainConfig c;
  c.model.kind = kind;
  c.model.layers = kind == "transformer" ? 2 : 1;
  c.task = {task.info().name, task.info().len, "", ""};
  train::complete_from_task(c, task.info());
  return nn::make_model(c.model, 0);
}
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("before training on recall at 64: the RNN's gradient vanishes, attention's does not", "[inspect][grads]") {
  const auto task = tasks::make_task({"recall", 64, "", ""});
  const tasks::Batch batch = task->eval_batches(32, 32, 1).front();
  const inspect::GradProfile rnn = inspect::gradient_profile(*fresh("rnn", *task), *task, batch);
  const inspect::GradProfile tf = inspect::gradient_profile(*fresh("transformer", *task), *task, batch);
  REQUIRE(rnn.grad_norm_x.size() == 65);
  CHECK(rnn.distance.front() == 64);
  CHECK(rnn.distance.back() == 0);
  INFO("rnn decay " << rnn.decay() << ", transformer decay " << tf.decay());
  CHECK(rnn.decay() < 1e-3);  // the farthest at least 1000 times smaller than the nearest
  CHECK(rnn.decay() > 0);     // but not flushed to zero: norms are summed in double
  CHECK(tf.decay() > 1e-2);   // within a factor 100
  REQUIRE(rnn.grad_norm_h.size() == 1);
  CHECK(rnn.grad_norm_h[0].front() < 1e-3 * rnn.grad_norm_h[0].back());
}

TEST_CASE("the RNN's Jacobian chain vanishes below spectral radius 1 and is rescaled exactly", "[inspect][grads]") {
  const auto task = tasks::make_task({"recall", 32, "", ""});
  const tasks::Batch batch = task->eval_batches(4, 4, 1).front();
  const auto rnn = fresh("rnn", *task);
  const std::vector<ag::Scalar> before = rnn->named_parameters()[2].second.data();  // layers.0.W_h
  const auto chains = inspect::jacobian_chains(*rnn, batch, {0.5, 1.5});
  REQUIRE(chains.size() == 3);
  CHECK(chains[1].spectral_radius == Approx(0.5).epsilon(1e-3));
  CHECK(chains[2].spectral_radius == Approx(1.5).epsilon(1e-3));
  CHECK(chains[1].norm.back() < 1e-6 * chains[1].norm.front());
  CHECK(rnn->named_parameters()[2].second.data() == before);  // W_h restored
  CHECK_THROWS_WITH(inspect::jacobian_chains(*fresh("lstm", *task), batch, {}), Catch::Contains("vanilla RNN only"));
}

TEST_CASE("spectral radius and norm of known matrices", "[inspect]") {
  CHECK(inspect::spectral_radius({2, 0, 0, -3}, 2) == Approx(3).epsilon(1e-6));
  CHECK(inspect::spectral_radius({0, 1, -1, 0}, 2) == Approx(1).epsilon(1e-6));  // a rotation: eigenvalues +-i
  CHECK(inspect::spectral_radius({0, 1, 0, 0}, 2) == 0);                         // nilpotent
  CHECK(inspect::spectral_norm({3, 0, 4, 0}, 2) == Approx(5).epsilon(1e-9));
}

TEST_CASE("path length: one op-block per step for the RNN, constant for attention", "[inspect][paths]") {
  nn::ModelConfig c;
  c.vocab = c.out_dim = 5;
  c.d_model = 8;
  c.heads = 2;
  c.max_len = 40;
  auto measure = [&](const std::string& kind, int layers, int len) {
    c.kind = kind;
    c.layers = layers;
    return inspect::measure_paths(*nn::make_model(c, 0), len);
  };
  const auto r10 = measure("rnn", 1, 10), r20 = measure("rnn", 1, 20);
  CHECK(r20.max_path() - r10.max_path() == 4 * 10);  // matmul, add, add, tanh per step
  CHECK(r10.path_from[9] == r20.path_from[19]);      // the nearest position: same path at any length
  CHECK(r20.path_from[0] - r20.path_from[1] == 4);
  CHECK(r20.sequential_ops - r10.sequential_ops == 4 * 10);
  const auto t10 = measure("transformer", 2, 10), t40 = measure("transformer", 2, 40),
             t40x4 = measure("transformer", 4, 40);
  CHECK(t10.max_path() == t10.min_path());
  CHECK(t40.max_path() == t10.max_path());
  CHECK(t40.sequential_ops == t10.sequential_ops);
  CHECK(t40x4.max_path() > t40.max_path());  // grows with layers only
  CHECK(t40x4.max_path() - t40.max_path() == 2 * (t40.max_path() - measure("transformer", 1, 40).max_path()));
}

TEST_CASE("path length: linear attention is flat in its parallel form, one op a step as its recurrence",
          "[inspect][paths]") {
  using A = nn::choices::Attention;
  const auto parallel = inspect::measure_paths({"transformer"}, {8, 16}, 1, A::linear, false);
  const auto recurrent = inspect::measure_paths({"rnn", "transformer"}, {8, 16}, 1, A::linear, true);
  REQUIRE(parallel.size() == 2);
  REQUIRE(recurrent.size() == 4);
  CHECK(parallel[0].model == "linear");
  CHECK(parallel[1].max_path() == parallel[0].max_path());
  CHECK(recurrent[0].model == "rnn");  // the recurrent models are as they are
  CHECK(recurrent[2].model == "linear-rnn");
  CHECK(recurrent[3].max_path() - recurrent[2].max_path() == 8);  // the state's add, once a position
  CHECK(recurrent[3].sequential_ops - recurrent[2].sequential_ops == 8);
  CHECK(recurrent[2].min_path() == recurrent[3].min_path());
  CHECK(inspect::to_text(recurrent).find("recurrent O(n) path") != std::string::npos);
}

TEST_CASE("compare writes a report whose figures are the JSON's, with SVGs that parse", "[inspect][report]") {
  inspect::CompareConfig c;
  c.models = {"rnn", "transformer"};
  c.task = {"recall", 6, "", ""};
  c.steps = 12;
  c.batch = 8;
  c.d_model = 16;
  c.eval_size = 32;
  c.snapshots = 3;
  c.path_lengths = {4, 7};
  const inspect::CompareResult r = inspect::run_compare(c, [](const std::string&) { return train::TrainObserver{}; });
  REQUIRE(r.contenders.size() == 2);
  CHECK(r.contenders[0].snapshot_steps == std::vector<long>{0, 4, 8, 12});
  CHECK(r.contenders[1].attention.has_value());
  CHECK(r.contenders[0].chains.size() == 4);
#ifdef SEQGRAD_FAST  // FLOPs are counted by the fast backend
  CHECK(r.contenders[1].flops_per_step > r.contenders[0].flops_per_step);
#endif
  const std::string dir = test::temp_path("test-report");
  std::filesystem::remove_all(dir);
  const std::string path = inspect::write_report(r, dir);
  const std::string page = slurp(path);
  const nlohmann::json data = nlohmann::json::parse(slurp(dir + "/data.json"));
  CHECK(page.find("<script") == std::string::npos);                        // self-contained, nothing to run
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // the only address is the SVG namespace
  // Attention: every layer from the row where the answer is read ('?' at 6), the head that
  // looks most at the key (position 0) named, its map drawn first, a table row per head.
  const inspect::AttentionMaps& maps = *r.contenders[1].attention;
  REQUIRE(maps.weights.size() == 2);
  const inspect::QueryRow row = inspect::query_row(maps, maps.answer_row);
  CHECK(row.query == 6);
  CHECK(row.key == 0);
  CHECK(page.find("last layer") == std::string::npos);
  const std::size_t section = page.find("<h2>Attention maps (transformer, every layer)</h2>");
  REQUIRE(section != std::string::npos);
  CHECK(page.find("from the key at position 0 ('" + maps.tokens[0] +
                      "'). The head that looks there most: " + inspect::named_head(maps, row, text::Lang::en) + ".",
                  section) != std::string::npos);
  for (std::size_t l = 0; l < maps.weights.size(); ++l)
    CHECK(page.find(fmt::format("layer {}: query row 6 ('?'), each head's weight on every key", l), section) !=
          std::string::npos);
  const std::size_t first_title = page.find("font-weight=\"bold\">", section);
  const std::string named_title = fmt::format("layer {}, head {}<", row.named.layer, row.named.head);
  CHECK(page.substr(first_title + 19, named_title.size()) == named_title);
  for (const inspect::HeadLook& h : row.heads)
    CHECK(page.find(fmt::format("<tr><td>{}</td><td>{}</td><td>{:.2f}</td>", h.layer, h.head, h.on_key), section) !=
          std::string::npos);
  // Every row of the summary table carries the JSON's figures.
  for (const auto& m : data["models"]) {
    const std::string row = "<td>" + m["model"].get<std::string>() + "</td><td>" +
                            std::to_string(m["params"].get<long>()) + "</td><td>" +
                            fmt::format("{:.4f}", m["final_train_loss"].get<double>()) + "</td><td>" +
                            fmt::format("{:.4f}", m["eval_loss"].get<double>()) + "</td><td>" +
                            fmt::format("{:.4f}", m["eval_token_acc"].get<double>()) + "</td>";
    INFO(row);
    CHECK(page.find(row) != std::string::npos);
  }
  // Recall has no sequence accuracy and no MSE: those columns are left out of the page and the
  // terminal table (the CSV keeps every column), and no cell of the summary is an empty "-".
  CHECK(page.find("<th>seq acc</th>") == std::string::npos);
  CHECK(page.find("<th>MSE</th>") == std::string::npos);
  CHECK(page.find("<td>-</td>") == std::string::npos);
  CHECK(inspect::to_text(r).find("seq acc") == std::string::npos);
  CHECK(slurp(dir + "/summary.csv").find("eval_seq_acc") != std::string::npos);
  // The gradient heatmaps put distance 0 on the left, as the line charts do: their first column tick is 0.
  const std::size_t heat = page.find("rnn: |dL/dx_t| over training");
  REQUIRE(heat != std::string::npos);
  const std::size_t tick = page.find("text-anchor=\"middle\">", page.find("stroke=\"#444\"", heat));
  CHECK(page.substr(tick + 21, 3) == "0</");
  // Each SVG, cut out of the page, is well-formed XML.
  const bool have_xmllint = std::system("command -v xmllint > /dev/null 2>&1") == 0;
  std::size_t at = 0;
  int checked = 0;
  while ((at = page.find("<svg", at)) != std::string::npos) {
    const std::size_t end = page.find("</svg>", at) + 6;
    if (have_xmllint) {
      const std::string file = dir + "/figure.svg";
      std::ofstream(file) << page.substr(at, end - at);
      CHECK(std::system(("xmllint --noout " + file + " 2>/dev/null").c_str()) == 0);
    }
    ++checked;
    at = end;
  }
  CHECK(checked >= 7);  // loss, accuracy, 2 gradient charts, 2 heatmaps, the chain, attention heads and rows
  if (!have_xmllint) WARN("xmllint is missing: the SVGs were not parsed (apt-get install libxml2-utils)");
}

TEST_CASE("lines that overlap stay apart: each series after the first has its own dash pattern", "[report]") {
  seqgrad::report::LineChart chart{"t", "x", "y", false, {}};
  for (const char* name : {"rnn", "lstm", "transformer"}) chart.series.push_back({name, {0, 1}, {1, 1}});
  const std::string s = seqgrad::report::svg(chart);
  CHECK(s.find("stroke-dasharray=\"7 4\"") != std::string::npos);
  CHECK(s.find("stroke-dasharray=\"2 3\"") != std::string::npos);
  CHECK(s.find("the last on top") != std::string::npos);
}

TEST_CASE("a log-scale heatmap's colour bar runs between whole decades, labelled as such", "[report]") {
  seqgrad::report::Heatmap h;
  h.values = {{1.3e-28, 2e-3}, {0.5, 0.9}};
  h.log_scale = true;
  const std::string s = seqgrad::report::svg(h);
  CHECK(s.find(">1e-28<") != std::string::npos);
  CHECK(s.find(">1e0<") != std::string::npos);
  CHECK(s.find("1e-27.9") == std::string::npos);
  CHECK(s.find("1e-0.0") == std::string::npos);
}

TEST_CASE("compare --match-params: each recurrent width gives the parameter count nearest the Transformer's",
          "[inspect]") {
  const seqgrad::tasks::TaskOptions recall{"recall", 64, "", ""};
  const seqgrad::tasks::TaskInfo info = seqgrad::tasks::make_task(recall)->info();
  const long target = seqgrad::inspect::parameter_count("transformer", recall, info, 64);
  CHECK(target > 100000);
  for (const std::string model : {"rnn", "lstm", "gru"}) {
    INFO(model);
    const int width = seqgrad::inspect::width_for_parameters(model, recall, info, target);
    const long at = seqgrad::inspect::parameter_count(model, recall, info, width);
    const long below = seqgrad::inspect::parameter_count(model, recall, info, width - 1);
    const long above = seqgrad::inspect::parameter_count(model, recall, info, width + 1);
    CHECK(below < at);
    CHECK(at < above);
    CHECK(std::abs(at - target) <= std::abs(below - target));
    CHECK(std::abs(at - target) <= std::abs(above - target));
    CHECK(std::abs(at - target) < target / 50);  // within 2%
  }
  // The widths this reports for the guide's run: rnn 217, lstm 111.
  CHECK(seqgrad::inspect::width_for_parameters("rnn", recall, info, target) == 217);
  CHECK(seqgrad::inspect::width_for_parameters("lstm", recall, info, target) == 111);
}

TEST_CASE("control characters in a token (a trained text may hold any) keep the SVG well-formed", "[report]") {
  using seqgrad::report::escape_xml;
  CHECK(escape_xml("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");
  CHECK(escape_xml(std::string("\x01\x1b\x7f", 3)) == "\u2401\u241b\u2421");
  CHECK(escape_xml("tab\tnew\nline") == "tab\tnew\nline");
  seqgrad::report::Heatmap map{"tokens", "key", "query", "weight", {}, {}, {{1, 0}, {0.5, 0.5}}};
  for (int c = 0; c < 32; ++c) map.x_ticks.push_back(std::string(1, static_cast<char>(c)) + "x");
  map.x_ticks.resize(2);
  map.y_ticks = {std::string("\x7f"), std::string("\x08<")};
  const std::string file = test::temp_path("control.svg");
  std::ofstream(file) << seqgrad::report::svg(map);
  if (std::system("command -v xmllint > /dev/null 2>&1") != 0) {
    WARN("xmllint is missing: the SVG was not parsed (apt-get install libxml2-utils)");
    return;
  }
  CHECK(std::system(("xmllint --noout " + file + " 2>/dev/null").c_str()) == 0);
  // Every control character at once, as labels of a wider map.
  map.values.assign(1, std::vector<double>(32, 0.5));
  map.x_ticks.clear();
  for (int c = 0; c < 32; ++c) map.x_ticks.push_back(std::string(1, static_cast<char>(c)));
  map.y_ticks = {"q"};
  std::ofstream(file, std::ios::trunc) << seqgrad::report::svg(map);
  CHECK(std::system(("xmllint --noout " + file + " 2>/dev/null").c_str()) == 0);
  std::remove(file.c_str());
}

namespace {
// Recall at len 4, "C a b c ?", answered at 4 from the key at 0; `layers` x `heads`
// heads whose every row is uniform over the positions up to it (the causal mask's shape).
inspect::AttentionMaps recall_maps(int layers, int heads) {
  inspect::AttentionMaps maps;
  maps.tokens = {"C", "a", "b", "c", "?"};
  maps.answer_row = 4;
  maps.distance = {-1, -1, -1, -1, 4};
  std::vector<std::vector<double>> uniform(5, std::vector<double>(5, 0.0));
  for (int q = 0; q < 5; ++q)
    for (int k = 0; k <= q; ++k) uniform[q][k] = 1.0 / (q + 1);
  maps.weights.assign(layers, std::vector<std::vector<std::vector<double>>>(heads, uniform));
  return maps;
}
}  // namespace

TEST_CASE("the query row names the head that puts the most weight on the key, in whichever layer",
          "[inspect][attention]") {
  inspect::AttentionMaps maps = recall_maps(2, 3);
  maps.weights[0][0][4] = {0.02, 0.01, 0.01, 0.01, 0.95};  // the largest weight of all, but on the query itself
  maps.weights[0][1][4] = {0.2, 0.3, 0.1, 0.1, 0.3};       // two tops of 0.3: the first, position 1
  maps.weights[0][2][4] = {0.9, 0.025, 0.025, 0.025, 0.025};
  maps.weights[1][0][4] = {0.05, 0.8, 0.05, 0.05, 0.05};
  maps.weights[1][1][4] = {0.11, 0.3, 0.29, 0.2, 0.1};
  CHECK(maps.key_of(4) == 0);
  CHECK(maps.key_of(2) == -1);
  inspect::QueryRow row = inspect::query_row(maps, 4);
  CHECK(row.key == 0);
  REQUIRE(row.heads.size() == 6);
  REQUIRE(row.weights.size() == 2);  // every layer
  CHECK(row.weights[1][0] == maps.weights[1][0][4]);
  CHECK(row.named.layer == 0);
  CHECK(row.named.head == 2);
  CHECK(row.named.on_key == 0.9);
  CHECK(row.heads[0].top == 4);
  CHECK(row.heads[1].top == 1);
  CHECK(row.heads[3].top == 1);
  CHECK(row.heads[3].top_weight == 0.8);
  CHECK(row.heads[4].on_key == 0.11);
  CHECK(inspect::named_head(maps, row, text::Lang::en) == "layer 0, head 2: 0.90 on the key");
  CHECK(inspect::named_head(maps, row, text::Lang::ko) == "층 0, 헤드 2: 키에 0.90");
  CHECK(inspect::row_line(maps, row, text::Lang::en) ==
        "query row 4 ('?'), where the answer is read; the key is at position 0 ('C')");

  // The lookup in the last layer instead: that head is named, not the first layer's.
  maps.weights[1][1][4] = {0.95, 0.05, 0, 0, 0};
  row = inspect::query_row(maps, 4);
  CHECK(row.named.layer == 1);
  CHECK(row.named.head == 1);
  CHECK(row.named.on_key == 0.95);

  // A row whose answer needs no one token: the head with the largest weight on any one position.
  maps.weights[1][0][2] = {0.1, 0.7, 0.2, 0, 0};
  row = inspect::query_row(maps, 2);
  CHECK(row.key == -1);
  CHECK(row.named.layer == 1);
  CHECK(row.named.head == 0);
  CHECK(inspect::named_head(maps, row, text::Lang::en) == "layer 1, head 0: 0.70 on position 1 ('a')");
  CHECK(inspect::named_head(maps, row, text::Lang::ko) == "층 1, 헤드 0: 위치 1('a')에 0.70");
  CHECK(inspect::most_line(maps, row, text::Lang::en) ==
        "the head that looks most at any one position: layer 1, head 0: 0.70 on position 1 ('a')");

  // A tie on the key: the first head, the lowest layer.
  inspect::AttentionMaps tie = recall_maps(2, 2);
  CHECK(inspect::query_row(tie, 4).named.layer == 0);
  CHECK(inspect::query_row(tie, 4).named.head == 0);

  CHECK_THROWS_WITH(inspect::query_row(maps, 5), "position 5 is not in the input: its positions are 0 to 4");
  CHECK_THROWS_WITH(inspect::query_row(maps, -1), "position -1 is not in the input: its positions are 0 to 4");
}

TEST_CASE("attention on recall: the answer is read at '?', from the key at 0, and the head named weighs it most",
          "[inspect][attention]") {
  const auto task = tasks::make_task({"recall", 8, "", ""});
  const auto model = fresh("transformer", *task);
  const inspect::AttentionMaps maps = inspect::attention_maps(*model, *task, "", 5);
  REQUIRE(maps.weights.size() == 2);
  CHECK(maps.answer_row == 8);
  CHECK(maps.tokens[8] == "?");
  CHECK(maps.key_of(8) == 0);
  CHECK(maps.tokens[0].size() == 1);
  CHECK(maps.tokens[0][0] >= 'A');  // the key: one of A..H
  CHECK(maps.tokens[0][0] <= 'H');
  const inspect::QueryRow row = inspect::query_row(maps, maps.answer_row);
  double most = -1;
  std::size_t layer = 0, head = 0;
  for (std::size_t l = 0; l < maps.weights.size(); ++l)
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h) {
      const double w = maps.weights[l][h][8][0];
      if (w > most) most = w, layer = l, head = h;
      const auto& r = maps.weights[l][h][8];
      CHECK(row.heads[l * maps.weights[l].size() + h].top_weight == *std::max_element(r.begin(), r.end()));
    }
  CHECK(row.named.layer == static_cast<int>(layer));
  CHECK(row.named.head == static_cast<int>(head));
  CHECK(row.named.on_key == most);

  // A typed input as long as the task's sequences has the same answer row and key; a shorter one no key.
  const inspect::AttentionMaps typed = inspect::attention_maps(*model, *task, "C a b c d e f g ?", 5);
  CHECK(typed.answer_row == 8);
  CHECK(typed.key_of(8) == 0);
  const inspect::AttentionMaps short_input = inspect::attention_maps(*model, *task, "C a ?", 5);
  CHECK(short_input.answer_row == 2);
  CHECK(short_input.key_of(2) == -1);
}

TEST_CASE("a chart given a range is drawn on it: attention weights of 0.1 stay low on an axis from 0 to 1",
          "[report]") {
  seqgrad::report::LineChart chart{
      "row", "key position", "weight", false, {{"head 0", {10, 11, 12}, {0.11, 0.05, 0.02}}}};
  const std::string fitted = seqgrad::report::svg(chart);
  chart.y_range = std::pair{0.0, 1.0};
  const std::string fixed = seqgrad::report::svg(chart);
  CHECK(fitted.find(">1</text>") == std::string::npos);  // fitted to the data, the axis stops near 0.11
  CHECK(fixed.find(">1</text>") != std::string::npos);
  CHECK(fixed.find(">0</text>") != std::string::npos);
  // 0.11 of a plot 256 high whose bottom is at 292: y = 292 - 28.16.
  CHECK(fixed.find("points=\"70.0,263.8 ") != std::string::npos);

  seqgrad::report::Heatmap map{"map", "key", "query", "weight", {"a", "b"}, {"q"}, {{0.4, 0.5}}};
  // The last cell (0.5, the data's top) is drawn just before the frame, in the top colour.
  CHECK(seqgrad::report::svg(map).find("fill=\"#fde725\"/>\n<rect x=\"70\" y=\"36\"") != std::string::npos);
  map.value_range = std::pair{0.0, 1.0};
  const std::string ranged = seqgrad::report::svg(map);
  CHECK(ranged.find("fill=\"#21918c\"/>\n<rect x=\"70\" y=\"36\"") != std::string::npos);  // 0.5, in the middle colour
  CHECK(ranged.find(">1</text>") != std::string::npos);                                    // the colour bar runs to 1
}
