#include "src/inspect/attention.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "src/io/files.h"
#include "src/report/svg.h"
#include "src/report/terminal.h"
#include "src/text/catalogue.h"

namespace seqgrad::inspect {

std::vector<int> parse_tokens(const tasks::Task& task, const std::string& text) {
  const tasks::TaskInfo& info = task.info();
  if (info.vocab == 0) throw std::invalid_argument(text::msg("inspect.attention.real_valued", info.name));
  if (info.text) return task.encode(text);
  std::vector<int> ids;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    int found = -1;
    for (int id = 0; id < info.vocab && found < 0; ++id)
      if (task.token_text(id) == word) found = id;
    if (found < 0) {
      std::string known;
      for (int id = 0; id < info.vocab; ++id) {
        if (!known.empty()) known += ' ';
        known += task.token_text(id);
      }
      throw std::invalid_argument(text::msg("inspect.attention.not_token", word, info.name, known));
    }
    ids.push_back(found);
  }
  if (ids.empty()) throw std::invalid_argument(text::msg("inspect.attention.empty"));
  return ids;
}

AttentionMaps attention_maps(const nn::SequenceModel& model, const tasks::Task& task, const std::string& text,
                             std::uint64_t seed) {
  if (model.config().recurrent())
    throw std::invalid_argument(text::msg("inspect.attention.recurrent", model.config().kind));
  nn::SequenceInput in{1, 0, {}, {}};
  if (text.empty()) {
    const tasks::Batch b = task.eval_batches(1, 1, seed).front();
    in = {1, b.T, b.tokens, b.features};
  } else {
    in.tokens = parse_tokens(task, text);
    in.T = static_cast<int>(in.tokens.size());
  }
  ag::NoGrad no_grad;
  nn::ForwardOptions keep_weights;
  keep_weights.capture.attention = true;
  const nn::ForwardOutput out = model.forward(in, keep_weights);
  AttentionMaps maps;
  for (int id : in.tokens) maps.tokens.push_back(task.token_text(id));
  if (in.tokens.empty())
    for (int t = 0; t < in.T; ++t) maps.tokens.push_back(std::to_string(t));
  const int T = in.T;
  for (const ag::Tensor& w : out.attention) {  // (1, heads, T, T)
    const int H = w.size(1);
    std::vector<std::vector<std::vector<double>>> layer(static_cast<std::size_t>(H));
    for (int h = 0; h < H; ++h) {
      layer[static_cast<std::size_t>(h)].assign(static_cast<std::size_t>(T),
                                                std::vector<double>(static_cast<std::size_t>(T)));
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j)
          layer[static_cast<std::size_t>(h)][static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
              w.data()[(static_cast<std::size_t>(h) * T + i) * T + j];
    }
    maps.weights.push_back(std::move(layer));
  }
  return maps;
}

std::vector<std::string> write_attention_svgs(const AttentionMaps& maps, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (std::size_t l = 0; l < maps.weights.size(); ++l) {
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h) {
      const std::string path = fmt::format("{}/layer{}-head{}.svg", dir, l, h);
      const report::Heatmap m{text::msg("inspect.attention.layer_head", l, h),
                              text::msg("inspect.attention.key"),
                              text::msg("inspect.attention.query"),
                              text::msg("inspect.attention.weight"),
                              maps.tokens,
                              maps.tokens,
                              maps.weights[l][h],
                              false,
                              460,
                              420};
      io::write_file(path, report::svg(m));
      files.push_back(path);
    }
  }
  return files;
}

nlohmann::json to_json(const AttentionMaps& maps, const std::vector<std::string>& files) {
  return {{"tokens", maps.tokens}, {"weights", maps.weights}, {"files", files}};
}

std::string to_text(const AttentionMaps& maps, const std::string& dir, bool colour) {
  std::string text;
  for (std::size_t l = 0; l < maps.weights.size(); ++l) {
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h) {
      text += fmt::format("{}\n", text::msg("inspect.attention.map", l, h));
      text += fmt::format("{}\n", report::terminal_heatmap(maps.weights[l][h], maps.tokens, false, colour));
    }
  }
  std::string input;
  for (const auto& t : maps.tokens) input += (input.empty() ? "" : " ") + t;
  return text + fmt::format("{}\n{}\n", text::msg("inspect.attention.input", input),
                            text::msg("inspect.attention.files", dir));
}

}  // namespace seqgrad::inspect
