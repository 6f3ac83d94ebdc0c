#include "src/inspect/attention.h"

#include <fmt/core.h>

#include <algorithm>
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

namespace {

// Where the answer is read and what it needs, from a batch of one sequence: the
// last scored position (the last one for a regression), and the batch's distances.
void read_answer_row(const tasks::Batch& b, AttentionMaps& maps) {
  maps.answer_row = b.T - 1;
  if (static_cast<int>(b.targets.size()) == b.T)
    for (int t = b.T; t-- > 0;)
      if (b.targets[static_cast<std::size_t>(t)] != tasks::kIgnore) {
        maps.answer_row = t;
        break;
      }
  if (static_cast<int>(b.distance.size()) == b.T)
    maps.distance = b.distance;
  else
    maps.distance.assign(static_cast<std::size_t>(b.T), -1);
}

}  // namespace

int AttentionMaps::key_of(int query) const {
  if (query < 0 || query >= static_cast<int>(distance.size())) return -1;
  const int back = distance[static_cast<std::size_t>(query)];
  return back >= 0 && back <= query ? query - back : -1;
}

AttentionMaps attention_maps(const nn::SequenceModel& model, const tasks::Task& task, const std::string& text,
                             std::uint64_t seed) {
  if (model.config().recurrent())
    throw std::invalid_argument(text::msg("inspect.attention.recurrent", model.config().kind));
  nn::SequenceInput in{1, 0, {}, {}};
  AttentionMaps maps;
  if (text.empty()) {
    const tasks::Batch b = task.eval_batches(1, 1, seed).front();
    in = {1, b.T, b.tokens, b.features};
    read_answer_row(b, maps);
  } else {
    in.tokens = parse_tokens(task, text);
    in.T = static_cast<int>(in.tokens.size());
    // Which position is scored, and how far back its token lies, depend on the
    // position alone (as for the shipped held-out sets): any sequence of the task shows them.
    ag::Rng rng(0);
    const tasks::Batch shape = task.sample(1, rng);
    if (shape.T == in.T) {
      read_answer_row(shape, maps);
    } else {
      maps.answer_row = in.T - 1;
      maps.distance.assign(static_cast<std::size_t>(in.T), -1);
    }
  }
  ag::NoGrad no_grad;
  nn::ForwardOptions keep_weights;
  keep_weights.capture.attention = true;
  const nn::ForwardOutput out = model.forward(in, keep_weights);
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

QueryRow query_row(const AttentionMaps& maps, int query) {
  const int T = maps.length();
  if (query < 0 || query >= T) throw std::invalid_argument(text::msg("inspect.attention.query_range", query, T - 1));
  QueryRow row;
  row.query = query;
  row.key = maps.key_of(query);
  bool first = true;
  for (std::size_t l = 0; l < maps.weights.size(); ++l) {
    row.weights.emplace_back();
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h) {
      const std::vector<double>& w = maps.weights[l][h][static_cast<std::size_t>(query)];
      row.weights.back().push_back(w);
      HeadLook look{static_cast<int>(l), static_cast<int>(h), 0, w[0],
                    row.key >= 0 ? w[static_cast<std::size_t>(row.key)] : 0};
      for (int p = 1; p < T; ++p)
        if (w[static_cast<std::size_t>(p)] > look.top_weight)
          look.top = p, look.top_weight = w[static_cast<std::size_t>(p)];
      row.heads.push_back(look);
      // Strictly more: on a tie the first head (the lowest layer) is named.
      const bool more = row.key >= 0 ? look.on_key > row.named.on_key : look.top_weight > row.named.top_weight;
      if (first || more) row.named = look;
      first = false;
    }
  }
  return row;
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
                              420,
                              std::pair{0.0, 1.0}};
      io::write_file(path, report::svg(m));
      files.push_back(path);
    }
  }
  return files;
}

std::string named_head(const AttentionMaps& maps, const QueryRow& row, text::Lang lang) {
  const HeadLook& n = row.named;
  if (row.key >= 0) return text::trf("inspect.attention.on_key", lang, n.layer, n.head, n.on_key);
  return text::trf("inspect.attention.on_position", lang, n.layer, n.head, n.top,
                   maps.tokens.at(static_cast<std::size_t>(n.top)), n.top_weight);
}

std::string row_line(const AttentionMaps& maps, const QueryRow& row, text::Lang lang) {
  const std::string& token = maps.tokens.at(static_cast<std::size_t>(row.query));
  const bool answer = row.query == maps.answer_row;
  if (row.key < 0)
    return text::trf(answer ? "inspect.attention.row_answer" : "inspect.attention.row", lang, row.query, token);
  return text::trf(answer ? "inspect.attention.row_answer_key" : "inspect.attention.row_key", lang, row.query, token,
                   row.key, maps.tokens.at(static_cast<std::size_t>(row.key)));
}

std::string most_line(const AttentionMaps& maps, const QueryRow& row, text::Lang lang) {
  return text::trf(row.key >= 0 ? "inspect.attention.most_key" : "inspect.attention.most_any", lang,
                   named_head(maps, row, lang));
}

nlohmann::json to_json(const AttentionMaps& maps, const QueryRow& row, const std::vector<std::string>& files) {
  const auto look = [](const HeadLook& h) {
    return nlohmann::json{
        {"layer", h.layer}, {"head", h.head}, {"top", h.top}, {"top_weight", h.top_weight}, {"on_key", h.on_key}};
  };
  nlohmann::json heads = nlohmann::json::array();
  for (const HeadLook& h : row.heads) heads.push_back(look(h));
  const nlohmann::json query = {{"position", row.query},
                                {"key", row.key >= 0 ? nlohmann::json(row.key) : nlohmann::json(nullptr)},
                                {"weights", row.weights},
                                {"heads", heads},
                                {"named", look(row.named)}};
  return {{"tokens", maps.tokens},
          {"weights", maps.weights},
          {"answer_row", maps.answer_row},
          {"query", query},
          {"files", files}};
}

namespace {

std::string input_and_files(const AttentionMaps& maps, const std::string& dir) {
  std::string input;
  for (const auto& t : maps.tokens) input += (input.empty() ? "" : " ") + t;
  return fmt::format("{}\n{}\n", text::msg("inspect.attention.input", input),
                     text::msg("inspect.attention.files", dir));
}

}  // namespace

std::string to_text(const AttentionMaps& maps, const std::string& dir, bool colour) {
  std::string text;
  for (std::size_t l = 0; l < maps.weights.size(); ++l) {
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h) {
      text += fmt::format("{}\n", text::msg("inspect.attention.map", l, h));
      text += fmt::format("{}\n", report::terminal_heatmap(maps.weights[l][h], maps.tokens, false, colour));
    }
  }
  if (!maps.weights.empty()) {
    const QueryRow row = query_row(maps, maps.answer_row);
    text += fmt::format("{}\n{}\n{}\n", row_line(maps, row, text::lang()), most_line(maps, row, text::lang()),
                        text::msg("inspect.attention.query_hint", row.query));
  }
  return text + input_and_files(maps, dir);
}

std::string to_text(const AttentionMaps& maps, const QueryRow& row, const std::string& dir) {
  const text::Lang lang = text::lang();
  std::string text = row_line(maps, row, lang) + "\n" + text::msg("inspect.attention.table") + "\n";
  // One column a head, "layer/head" over it; one row a position, the key marked.
  const std::string position = text::msg("inspect.attention.position"), token = text::msg("inspect.attention.token");
  std::size_t token_width = report::display_width(token);
  for (const auto& t : maps.tokens) token_width = std::max(token_width, report::display_width(t));
  const std::size_t position_width = std::max<std::size_t>(report::display_width(position), 3);
  text += fmt::format("{:>{}} {:<{}}", position, position_width, token, token_width);
  for (const HeadLook& h : row.heads) text += fmt::format(" {:>5}", fmt::format("{}/{}", h.layer, h.head));
  text += "\n";
  for (int p = 0; p < maps.length(); ++p) {
    text += fmt::format("{:>{}} {:<{}}", p, position_width, maps.tokens[static_cast<std::size_t>(p)], token_width);
    for (const HeadLook& h : row.heads)
      text += fmt::format(" {:>5.2f}", row.weights[static_cast<std::size_t>(h.layer)][static_cast<std::size_t>(h.head)]
                                                  [static_cast<std::size_t>(p)]);
    if (p == row.key) text += "  " + text::msg("inspect.attention.key_mark");
    text += "\n";
  }
  text += most_line(maps, row, lang) + "\n" + text::msg("inspect.attention.each_head") + "\n";
  for (const HeadLook& h : row.heads)
    text += "  " +
            text::msg("inspect.attention.head_top", h.layer, h.head, h.top,
                      maps.tokens.at(static_cast<std::size_t>(h.top)), h.top_weight) +
            "\n";
  return text + input_and_files(maps, dir);
}

}  // namespace seqgrad::inspect
