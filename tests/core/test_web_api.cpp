// The browser bench's entry point (src/web/api.cpp), natively: what the page
// sends and what it gets back, against the same work done directly.
#include <fmt/format.h>
#include <seqgrad_catch.hpp>

#include <set>

#include "src/inspect/attention.h"
#include "src/inspect/paths.h"
#include "src/labs/lab.h"
#include "src/nn/choices.h"
#include "src/text/catalogue.h"
#include "src/train/config.h"
#include "src/train/trainer.h"
#include "src/web/api.h"

using nlohmann::json;
namespace web = seqgrad::web;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("web: hello lists the models, tasks and labs, and the page's words in both languages") {
  const json h = web::handle({{"cmd", "hello"}}, {});
  CHECK(h["models"] == json(seqgrad::nn::choices::kinds));
  CHECK(h["attentions"] == json(seqgrad::nn::choices::attentions));
  bool recall = false;
  for (const json& t : h["tasks"]) recall |= t["name"] == "recall" && t["len"].get<int>() > 0;
  CHECK(recall);
  REQUIRE(h["labs"].size() == seqgrad::labs::all_labs().size());
  for (std::size_t i = 0; i < h["labs"].size(); ++i) {
    const auto& lab = seqgrad::labs::all_labs()[i];
    INFO(lab.name);
    CHECK(h["labs"][i]["name"] == lab.name);
    CHECK(h["labs"][i]["claim"]["en"] == lab.claim);  // the CLI's claim is the catalogue's English
    const std::string ko = h["labs"][i]["claim"]["ko"];
    CHECK(ko != lab.claim);
    CHECK(count(ko, "\xEB") + count(ko, "\xEC") > 0);  // Hangul syllables start with bytes EA..ED
  }
  std::set<std::string> en_keys, ko_keys;
  for (const auto& [k, v] : h["strings"]["en"].items()) en_keys.insert(k);
  for (const auto& [k, v] : h["strings"]["ko"].items()) ko_keys.insert(k);
  CHECK(en_keys == ko_keys);
  CHECK(en_keys.count("train.start") == 1);
  CHECK(h["strings"]["ko"]["train.start"] != h["strings"]["en"]["train.start"]);
}

TEST_CASE("web: train is `seqgrad train` with progress posted on the way") {
  std::vector<json> posts;
  const json request = {{"cmd", "train"}, {"model", "transformer"}, {"task", "recall"}, {"len", 8}, {"steps", 40},
                        {"seed", 3},      {"d_model", 16},          {"lang", "ko"}};
  const json r = web::handle(request, [&](const json& m) { posts.push_back(m); });

  // The same run done directly, as the CLI does it: the same figures to the last bit.
  seqgrad::train::TrainConfig c = seqgrad::train::fresh_config("transformer", {"recall", 8, "", ""}, 16, 40, 3);
  const seqgrad::train::TrainResult direct = seqgrad::train::run_training(c, {});
  CHECK(r["eval"]["token_acc"].get<double>() == *direct.eval.token_acc);
  CHECK(r["eval"]["loss"].get<double>() == direct.eval.loss);
  CHECK(r["first_loss"].get<double>() == direct.log.front().loss);
  CHECK(r["final_loss"].get<double>() == direct.log.back().loss);
  CHECK(r["params"].get<std::size_t>() == direct.params);
  CHECK(r["steps"] == 40);

  // Progress: at least the last step, its loss the log's; the gradient every 2 steps from 0 to 40.
  std::vector<json> progress, grads;
  for (const json& m : posts) (m["type"] == "progress" ? progress : grads).push_back(m);
  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back()["step"] == 40);
  CHECK(progress.back()["loss"].get<double>() == direct.log.back().loss);
  CHECK(progress.back()["text"].get<std::string>().find("스텝 40/40") == 0);
  REQUIRE(grads.size() == 21);
  CHECK(grads.front()["step"] == 0);
  CHECK(grads.back()["step"] == 40);
  CHECK(grads.back()["charts"].size() == 2);
  CHECK(count(grads.back()["charts"][0].get<std::string>(), "학습 전") == 1);  // the before-training line's name

  // Every layer from the row where the answer is read: the named head's map, each layer's query row,
  // the other heads' maps; the head named is the one the same maps, read directly, name.
  const auto maps = seqgrad::inspect::attention_maps(*direct.model, *direct.task, "", seqgrad::train::eval_seed(3));
  const auto row = seqgrad::inspect::query_row(maps, maps.answer_row);
  REQUIRE(maps.weights.size() == 2);
  REQUIRE(r["attention"].size() == 2 + 2 * maps.weights[0].size());
  for (const json& svg : r["attention"]) CHECK(svg.get<std::string>().rfind("<svg", 0) == 0);
  CHECK(count(r["attention"][0].get<std::string>(), fmt::format("층 {}, 헤드 {}<", row.named.layer, row.named.head)) ==
        1);
  CHECK(count(r["attention"][1].get<std::string>(), "층 0: 쿼리 행 8('?')") == 1);
  CHECK(count(r["attention"][2].get<std::string>(), "층 1: 쿼리 행 8('?')") == 1);
  CHECK(r["attention_named"]["layer"] == row.named.layer);
  CHECK(r["attention_named"]["head"] == row.named.head);
  CHECK(r["attention_named"]["key"] == 0);
  CHECK(r["attention_named"]["on_key"] == row.named.on_key);
  const std::string en = r["attention_note"]["en"], ko = r["attention_note"]["ko"];
  CHECK(en.find("The answer is read at position 8 ('?'), from the key at position 0 ('" + maps.tokens[0] +
                "'). The head that looks there most: " +
                fmt::format("layer {}, head {}: {:.2f} on the key.", row.named.layer, row.named.head,
                            row.named.on_key)) == 0);
  CHECK(ko.find(fmt::format("층 {}, 헤드 {}: 키에 {:.2f}.", row.named.layer, row.named.head, row.named.on_key)) !=
        std::string::npos);
  const auto paths = seqgrad::inspect::measure_paths(*direct.model, 9);
  CHECK(r["paths"]["len"] == 9);
  CHECK(r["paths"]["from_first"] == paths.max_path());
  CHECK(r["paths"]["sequential_ops"] == paths.sequential_ops);
  CHECK(r["examples"].size() == 4);
}

TEST_CASE("web: linear attention on assoc trains as `seqgrad train --attention linear --task assoc` does") {
  const json request = {
      {"cmd", "train"}, {"model", "transformer"}, {"attention", "linear"}, {"task", "assoc"}, {"len", 4}, {"steps", 20},
      {"seed", 1},      {"d_model", 16}};
  const json r = web::handle(request, {});
  CHECK(r["task"] == "assoc");
  seqgrad::train::TrainConfig c = seqgrad::train::fresh_config("transformer", {"assoc", 4, "", ""}, 16, 20, 1);
  c.model.attention = seqgrad::nn::choices::Attention::linear;
  const seqgrad::train::TrainResult direct = seqgrad::train::run_training(c, {});
  CHECK(r["eval"]["loss"].get<double>() == direct.eval.loss);
  seqgrad::train::TrainConfig softmax = seqgrad::train::fresh_config("transformer", {"assoc", 4, "", ""}, 16, 20, 1);
  CHECK(r["final_loss"].get<double>() != seqgrad::train::run_training(softmax, {}).log.back().loss);
}

TEST_CASE("web: a recurrent model has no attention maps, paths grow for the RNN only") {
  const json r =
      web::handle({{"cmd", "train"}, {"model", "gru"}, {"task", "copy"}, {"len", 4}, {"steps", 3}, {"d_model", 8}}, {});
  CHECK_FALSE(r.contains("attention"));
  CHECK(r["eval"].contains("seq_acc"));
  const json p = web::handle({{"cmd", "paths"}}, {});
  int rnn8 = 0, rnn64 = 0, tf8 = 0, tf64 = 0;
  for (const json& m : p["data"]) {
    if (m["model"] == "rnn" && m["T"] == 8) rnn8 = m["path_from_first"];
    if (m["model"] == "rnn" && m["T"] == 64) rnn64 = m["path_from_first"];
    if (m["model"] == "transformer" && m["T"] == 8) tf8 = m["path_from_first"];
    if (m["model"] == "transformer" && m["T"] == 64) tf64 = m["path_from_first"];
  }
  CHECK(rnn64 > rnn8 * 4);
  CHECK(tf64 == tf8);
  CHECK(p["chart"].get<std::string>().rfind("<svg", 0) == 0);
}

TEST_CASE("web: a lab answers with its claim in the asked language and its computed verdict") {
  const json r = web::handle({{"cmd", "lab"}, {"name", "attention-by-hand"}, {"lang", "ko"}}, {});
  const auto direct = seqgrad::labs::find_lab("attention-by-hand").run();
  CHECK(r["holds"] == direct.holds);
  CHECK(r["figures"] == json::parse(direct.figures.dump()));  // ordered_json vs json
  CHECK(r["claim"] == seqgrad::text::tr("lab.attention-by-hand.claim", seqgrad::text::Lang::ko));
  CHECK(r["verdict"] == (direct.holds ? "성립" : "성립하지 않음"));
}

TEST_CASE("web: compare trains the recurrent models beside the Transformer and says what the figures show") {
  std::vector<json> posts;
  const json request = {{"cmd", "compare"}, {"models", {"rnn", "transformer"}},
                        {"len", 8},         {"steps", 60},
                        {"d_model", 16},    {"lang", "ko"}};
  const json r = web::handle(request, [&](const json& m) { posts.push_back(m); });
  REQUIRE(r["rows"].size() == 2);
  CHECK(r["rows"][0]["model"] == "rnn");
  CHECK(r["rows"][1]["model"] == "transformer");
  // The path from x_0 grows with the RNN's steps and not with the Transformer's.
  CHECK(r["rows"][1]["path_from_first"].get<int>() < r["rows"][0]["path_from_first"].get<int>());
  std::set<std::string> reported;
  for (const json& m : posts)
    if (m["type"] == "compare-progress") reported.insert(m["model"].get<std::string>());
  CHECK(reported == std::set<std::string>{"rnn", "transformer"});
  REQUIRE(r["charts"].size() == 3);
  const std::string loss_chart = r["charts"][0], grads_chart = r["charts"][1];
  CHECK(loss_chart.find("모델별 학습 손실") != std::string::npos);
  CHECK(grads_chart.find("rnn") != std::string::npos);
  // The verdict is the one its kind names, filled with the rows' accuracies.
  const std::string kind = r["verdict_kind"];
  REQUIRE((kind == "attention" || kind == "close" || kind == "other"));
  const double t = 100 * r["rows"][1]["token_acc"].get<double>(), b = 100 * r["rows"][0]["token_acc"].get<double>();
  CHECK(kind == (t >= 90 && t - b >= 20 ? "attention" : std::abs(t - b) < 20 ? "close" : "other"));
  CHECK(r["verdict"] == seqgrad::text::trf("web.compare.verdict_" + kind, seqgrad::text::Lang::ko, 8, t, "rnn", b,
                                           100 * r["chance"].get<double>()));
  // Without a Transformer, or without a recurrent model, there is nothing to compare.
  for (const json& models : {json{"rnn", "lstm"}, json{"transformer"}, json{"rnn", "rnn", "transformer"}}) {
    const json answer = json::parse(web::handle_text(json{{"cmd", "compare"}, {"models", models}}.dump(), {}));
    CHECK(answer["error"] == seqgrad::text::tr("web.compare.models_bad", seqgrad::text::Lang::en));
  }
}

TEST_CASE("web: a bad request is one line naming what is wrong") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "parse error"},
      {"[1, 2]", "a request is a JSON object with a string 'cmd'"},
      {R"({"cmd": "fly"})", "unknown cmd 'fly'"},
      {R"({"cmd": "train", "model": "cnn"})", "'model' is 'cnn'; expected one of rnn, lstm, gru, transformer"},
      {R"({"cmd": "train", "len": 300})", "'len' must be a whole number from 0 to 256"},
      {R"({"cmd": "train", "steps": "ten"})", "'steps' must be a whole number from 1 to 20000"},
      {R"({"cmd": "train", "seed": -1})", "'seed' must be a whole number"},
      {R"({"cmd": "train", "task": "lookback", "len": 2})", "len for lookback must be between 5"},
      {R"({"cmd": "train", "lang": "fr"})", "'lang' is 'fr'; expected one of en, ko"},
      {R"({"cmd": "train", "attention": "sparse"})", "'attention' is 'sparse'; expected one of softmax, linear"},
      {R"({"cmd": "train", "model": "lstm", "attention": "linear"})", "linear attention is the Transformer's"},
      {R"({"cmd": "lab", "name": "nope"})", "nope"},
      {R"({"cmd": "bench", "workload": "huge"})", "'workload' is 'huge'"},
  };
  for (const auto& [request, expected] : cases) {
    INFO(request);
    const json answer = json::parse(web::handle_text(request, {}));
    REQUIRE(answer.contains("error"));
    const std::string message = answer["error"];
    CHECK(message.find(expected) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}
