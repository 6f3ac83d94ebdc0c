// Labs that train: how far each architecture carries a memory, what several
// heads buy over one, what the FFN adds to attention, and what a trained
// model's Q K^T looks like.
#include <fmt/core.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "autograd/ops.h"
#include "src/inspect/grads.h"
#include "src/labs/registry.h"
#include "src/nn/init.h"
#include "src/nn/transformer.h"
#include "src/tasks/task.h"
#include "src/train/run.h"
#include "src/train/trainer.h"

namespace seqgrad::labs {

train::TrainConfig small_config(const tasks::TaskOptions& task, int heads, int ffn_mult, int steps,
                                std::uint64_t seed) {
  train::TrainConfig c = train::fresh_config("transformer", task, 32, steps, seed);
  c.model.layers = 1;
  c.model.heads = heads;
  c.model.ffn = ffn_mult > 0;
  if (ffn_mult > 0) c.model.ffn_mult = ffn_mult;
  c.optim.lr = 3e-3;
  return c;
}

namespace {

// Recall at distances 5, 10, 20, 40 for the vanilla RNN, the LSTM, the GRU and
// the Transformer, each trained the same way (width 32, batch 32), for a budget
// of 400 steps and of 1600. A model's reach is the longest distance up to which
// it recalls the key on at least 90% of held-out sequences: a figure of the
// model and the budget together.
LabResult gates() {
  LabResult r;
  const std::vector<int> distances{5, 10, 20, 40}, budgets{trial_steps(400), trial_steps(1600)};
  const std::uint64_t seed = trial_seeds().front();
  for (int steps : budgets) {
    for (const char* kind : {"rnn", "lstm", "gru", "transformer"}) {
      std::vector<double> acc;
      int longest = 0;
      bool still = true;
      for (int d : distances) {
        train::TrainConfig c = train::fresh_config(kind, {"recall", d, "", ""}, 32, steps, seed);
        c.batch = 32;
        c.eval_size = 256;
        c.optim.lr = std::string(kind) == "transformer" ? 1e-3 : 3e-3;
        const double a = *train::run_training(c, {}).eval.token_acc;
        acc.push_back(a);
        still = still && a >= 0.9;
        if (still) longest = d;
      }
      r.figures[std::to_string(steps) + "_steps"][kind] = {
          {"distance", distances}, {"accuracy", acc}, {"reach", longest}};
      std::string row;
      for (std::size_t i = 0; i < distances.size(); ++i) row += fmt::format("  {:>2}: {:.3f}", distances[i], acc[i]);
      r.line("labs.gates.row", steps, kind, row, longest);
    }
  }
  r.line("labs.gates.note", seed);
  return r;
}

// At each budget the gated models reach further than the vanilla RNN and attention furthest; and the budget moves
// the gated models' reach.
void judge_gates(LabResult& r) {
  std::vector<int> budgets;
  std::map<int, std::map<std::string, int>> reach;  // by budget, by model
  int longest = 0;
  for (const auto& [key, models] : r.figures.items()) {
    const int steps = std::stoi(key);  // "400_steps"
    budgets.push_back(steps);
    for (const auto& [kind, at] : models.items()) {
      reach[steps][kind] = at["reach"];
      longest = at["distance"].back();
    }
  }
  for (int steps : budgets) {
    auto& m = reach[steps];
    const std::string at = fmt::format("_{}", steps);
    r.require("labs.gates.if.gated", std::min(m["lstm"], m["gru"]), Rel::gt, m["rnn"], steps, m["lstm"], m["gru"],
              m["rnn"])
        .as("gated" + at);
    short_budget(
        r.require("labs.gates.if.attention", m["transformer"], Rel::eq, longest, steps, m["transformer"], longest))
        .as("attention" + at);
    r.require("labs.gates.if.furthest", m["transformer"], Rel::ge, std::max(m["lstm"], m["gru"]), steps,
              m["transformer"], std::max(m["lstm"], m["gru"]))
        .as("furthest" + at);
  }
  auto& shorter = reach[budgets.front()];
  auto& longer = reach[budgets.back()];
  r.require("labs.gates.if.budget", longer["lstm"] + longer["gru"], Rel::gt, shorter["lstm"] + shorter["gru"],
            budgets.back(), longer["lstm"] + longer["gru"], budgets.front(), shorter["lstm"] + shorter["gru"]);
}

// The LSTM and the GRU on recall over 40 tokens, as the gates lab trains them (width 32, batch 32, Adam at 3e-3,
// 1600 steps): the gradient the last position's loss sends back to the first input, against the one to the
// nearest, before training and after, beside the held-out accuracy.
LabResult gru_gradient() {
  LabResult r;
  constexpr int kDistance = 40;
  const int steps = trial_steps(1600);
  const std::uint64_t seed = trial_seeds().front();
  const std::shared_ptr<tasks::Task> task = tasks::make_task({"recall", kDistance, "", ""});
  const tasks::Batch probe = task->eval_batches(64, 64, 1 + seed).front();
  std::map<std::string, double> accuracy;
  for (const char* kind : {"lstm", "gru"}) {
    train::TrainConfig c = train::fresh_config(kind, {"recall", kDistance, "", ""}, 32, steps, seed);
    c.batch = 32;
    c.eval_size = 256;
    c.optim.lr = 3e-3;
    const train::Run fresh = train::make_run(c, task);
    const double before = inspect::gradient_profile(*fresh.model, *task, probe).decay();
    train::RunOptions once;
    once.task = task;
    const train::TrainResult trained = train::run_training(fresh.config, once);
    const double after = inspect::gradient_profile(*trained.model, *task, probe).decay();
    accuracy[kind] = *trained.eval.token_acc;
    r.figures[kind] = {{"far_over_near_before", before}, {"far_over_near_after", after}, {"accuracy", accuracy[kind]}};
    r.line("labs.gru-gradient.row", kind, before, after, steps, accuracy[kind]);
  }
  r.line("labs.gru-gradient.note", kDistance, seed);
  r.figures["steps"] = steps;
  return r;
}

// The GRU starts two or more orders of magnitude behind, learns the task where the LSTM does not, and its far
// gradient grows by more than four orders with training. (The LSTM's after training is no guide either way: from
// 1e-8 to 5 over seeds 0-3, beside accuracies of 0.10 to 0.35.)
void judge_gru_gradient(LabResult& r) {
  const auto& f = r.figures;
  const int steps = f["steps"];
  const double lstm_before = f["lstm"]["far_over_near_before"], gru_before = f["gru"]["far_over_near_before"],
               gru_after = f["gru"]["far_over_near_after"], lstm_acc = f["lstm"]["accuracy"],
               gru_acc = f["gru"]["accuracy"];
  r.require("labs.gru-gradient.if.behind", gru_before / lstm_before, Rel::lt, 1e-2, gru_before, lstm_before);
  short_budget(r.require("labs.gru-gradient.if.gru_learns", gru_acc, Rel::ge, 0.9, gru_acc, steps));
  r.require("labs.gru-gradient.if.lstm_not", lstm_acc, Rel::lt, 0.9, lstm_acc, steps);
  r.require("labs.gru-gradient.if.grows", gru_after / gru_before, Rel::gt, 1e4, gru_after / gru_before);
}

// small_config, trained on `task` at its default length.
train::TrainResult train_small(const std::string& task, int heads, int ffn_mult, int steps, std::uint64_t seed) {
  return train::run_training(small_config({task, 0, "", ""}, heads, ffn_mult, steps, seed), {});
}

std::string row_of(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += fmt::format(" {:.3f}", x);
  return s;
}

// The first step at which the training batch's accuracy, averaged over the 50
// steps up to it, reaches `threshold`; 0 if it never does.
long steps_to(const std::vector<train::StepLog>& log, double threshold) {
  constexpr std::size_t kWindow = 50;
  double sum = 0;
  for (std::size_t i = 0; i < log.size(); ++i) {
    sum += log[i].accuracy.value_or(0);
    if (i >= kWindow) sum -= log[i - kWindow].accuracy.value_or(0);
    if (i + 1 >= kWindow && sum / kWindow >= threshold) return log[i].step;
  }
  return 0;
}

// lookback: 4 x[t-1] + 2 x[t-2] + x[t-4]. One head of width 32 against four
// of width 8 (the same parameters and FLOPs), seeds 0-2, 4000 steps each: how
// many steps each needs, and which offsets the four heads look at.
LabResult multi_head() {
  LabResult r;
  const int kSteps = trial_steps(4000);
  const std::vector<std::uint64_t> seeds = trial_seeds();
  std::map<int, std::vector<long>> reached;
  std::map<int, std::vector<double>> accuracy;
  std::map<int, std::size_t> params;
  std::shared_ptr<nn::SequenceModel> four;
  for (int heads : {1, 4}) {
    for (std::uint64_t seed : seeds) {
      const train::TrainResult t = train_small("lookback", heads, 4, kSteps, seed);
      reached[heads].push_back(steps_to(t.log, 0.9));
      accuracy[heads].push_back(*t.eval.token_acc);
      params[heads] = t.params;
      if (heads == 4 && !four) four = t.model;
    }
    const auto when = [&](text::Lang lang) {
      std::string out;
      for (long s : reached[heads])
        out += s ? fmt::format(" {:>5}", s) : "  " + std::string(text::tr("labs.multi-head.never", lang));
      return out;
    };
    r.figures[fmt::format("heads_{}", heads)] = {{"d_k", 32 / heads},
                                                 {"params", params[heads]},
                                                 {"steps_to_90", reached[heads]},
                                                 {"accuracy_by_seed", accuracy[heads]}};
    r.line_each([&](text::Lang lang) {
      // English says "1 head " or "4 heads"; Korean counts with 개 and needs no ending
      const std::string ending = lang == text::Lang::ko ? "" : heads == 1 ? " " : "s";
      return text::trf("labs.multi-head.row", lang, heads, ending, 32 / heads, params[heads], when(lang), kSteps,
                       row_of(accuracy[heads]));
    });
  }
  // What each of the four heads (the first seed) looks at: its mean weight on the tokens 0 to 4 steps back.
  const auto task = tasks::make_task({"lookback", 0, "", ""});
  const tasks::Batch batch = task->eval_batches(32, 32, 1).front();
  const int T = batch.T;
  nn::ForwardOptions keep;
  keep.capture.attention = true;
  const ag::Tensor w = four->forward({batch.B, T, batch.tokens, {}}, keep).attention.at(0);  // (B, 4, T, T)
  std::vector<int> favourite;
  for (int h = 0; h < 4; ++h) {
    std::vector<double> at(5, 0.0);
    for (int b = 0; b < batch.B; ++b)
      for (int t = 4; t < T; ++t)
        for (int o = 0; o <= 4; ++o)
          at[static_cast<std::size_t>(o)] +=
              w.data()[((static_cast<std::size_t>(b) * 4 + h) * T + t) * T + (t - o)] / (batch.B * (T - 4));
    favourite.push_back(static_cast<int>(std::max_element(at.begin(), at.end()) - at.begin()));
    r.figures["heads_4"]["offsets_first_seed"].push_back(at);
    r.line("labs.multi-head.head", seeds.front(), h, row_of(at), favourite.back());
  }
  r.line("labs.multi-head.note");
  r.figures["steps"] = kSteps;
  return r;
}

void judge_multi_head(LabResult& r) {
  const auto& f = r.figures;
  const int kSteps = f["steps"];
  const auto params_1 = f["heads_1"]["params"].get<double>(), params_4 = f["heads_4"]["params"].get<double>();
  std::map<int, std::vector<long>> reached;
  std::map<int, std::vector<double>> accuracy;
  for (int heads : {1, 4}) {
    const auto& h = f[fmt::format("heads_{}", heads)];
    for (const auto& s : h["steps_to_90"]) reached[heads].push_back(s.get<long>());
    accuracy[heads] = h["accuracy_by_seed"].get<std::vector<double>>();
  }
  const std::size_t seeds = reached[1].size();
  r.require("labs.multi-head.if.params", params_4, Rel::eq, params_1, params_4, params_1);
  // Seed by seed: four heads win when they reach 90% first (or alone), lose when one head does; when neither reaches
  // it in the budget, nothing contradicts the claim and nothing shows it.
  int won = 0, lost = 0, neither = 0;
  for (std::size_t i = 0; i < seeds; ++i) {
    const long four_at = reached[4][i], one_at = reached[1][i];
    if (four_at > 0 && (one_at == 0 || four_at < one_at)) {
      ++won;
    } else if (one_at > 0) {
      ++lost;
    } else {
      ++neither;
    }
  }
  const auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  Condition& faster = r.require("labs.multi-head.if.faster", won, Rel::eq, static_cast<double>(seeds), won, seeds);
  if (lost == 0 && neither > 0)
    faster.undecided(mean(accuracy[4]) > mean(accuracy[1]) ? "labs.multi-head.why.ahead" : "labs.multi-head.why.behind",
                     neither, kSteps, mean(accuracy[4]), mean(accuracy[1]));
  // Every seed's four heads before any seed's one head; a model that never reaches 90% counts as past the budget.
  long fastest_one = 0;
  for (long s : reached[1])
    if (s > 0) fastest_one = fastest_one == 0 ? s : std::min(fastest_one, s);
  const bool four_all = std::all_of(reached[4].begin(), reached[4].end(), [](long s) { return s > 0; });
  const long slowest_four = four_all ? *std::max_element(reached[4].begin(), reached[4].end()) : 0;
  const auto at = [&](long s, text::Lang lang) {
    return s > 0 ? text::trf("labs.multi-head.at_step", lang, s) : std::string(text::tr("labs.multi-head.never", lang));
  };
  Condition& apart =
      r.require("labs.multi-head.if.apart", four_all ? slowest_four : kSteps + 1, Rel::lt,
                fastest_one > 0 ? fastest_one : kSteps + 1, at(slowest_four, text::Lang::en),
                at(fastest_one, text::Lang::en))
          .say("labs.multi-head.if.apart", at(slowest_four, text::Lang::ko), at(fastest_one, text::Lang::ko));
  if (!four_all && fastest_one == 0) apart.undecided("labs.multi-head.why.unreached", kSteps);
}

// modsum: (x[t-1] + x[t-2]) mod 5. One block of width 32 with FFNs 1, 2, 4
// and 8 times the width, against models without an FFN: the same block, one
// of width 64 (more parameters than the 4x FFN's), and three attention layers
// (about as many); 1000 steps, and 3000 for the plain block without an FFN.
LabResult ffn() {
  LabResult r;
  struct Variant {
    std::string name, label;  // label: its id in the catalogue
    int ffn_mult, d_model, layers, steps;
  };
  const std::vector<Variant> variants{
      {"no_ffn", "labs.ffn.no_ffn", 0, 32, 1, 1000},
      {"no_ffn_width_64", "labs.ffn.no_ffn_width_64", 0, 64, 1, 1000},
      {"no_ffn_3_layers", "labs.ffn.no_ffn_3_layers", 0, 32, 3, 1000},
      {"ffn_1x", "labs.ffn.ffn_1x", 1, 32, 1, 1000},
      {"ffn_2x", "labs.ffn.ffn_2x", 2, 32, 1, 1000},
      {"ffn_4x", "labs.ffn.ffn_4x", 4, 32, 1, 1000},
      {"ffn_8x", "labs.ffn.ffn_8x", 8, 32, 1, 1000},
      {"no_ffn_3000_steps", "labs.ffn.no_ffn", 0, 32, 1, 3000},
  };
  std::map<std::string, std::vector<double>> acc;
  for (Variant v : variants) {
    std::size_t params = 0;
    v.steps = trial_steps(v.steps);
    for (std::uint64_t seed : trial_seeds()) {
      train::TrainConfig c = small_config({"modsum", 0, "", ""}, 2, v.ffn_mult, v.steps, seed);
      c.model.d_model = v.d_model;
      c.model.layers = v.layers;
      const train::TrainResult t = train::run_training(c, {});
      acc[v.name].push_back(*t.eval.token_acc);
      params = t.params;
    }
    const std::vector<double>& a = acc[v.name];
    r.figures[v.name] = {{"ffn_width", v.ffn_mult * v.d_model},
                         {"d_model", v.d_model},
                         {"layers", v.layers},
                         {"steps", v.steps},
                         {"params", params},
                         {"accuracy_by_seed", a}};
    r.line_each([&](text::Lang lang) {
      return text::trf("labs.ffn.row", lang, v.steps, text::tr(v.label, lang), params, row_of(a));
    });
  }
  r.line("labs.ffn.task");
  r.line("labs.ffn.why");
  return r;
}

void judge_ffn(LabResult& r) {
  const auto accuracy = [&](const char* name) {
    return r.figures[name]["accuracy_by_seed"].get<std::vector<double>>();
  };
  const auto worst = [&](std::initializer_list<const char*> names) {
    double w = 1;
    for (const char* n : names) {
      const auto a = accuracy(n);
      w = std::min(w, *std::min_element(a.begin(), a.end()));
    }
    return w;
  };
  const auto best = [&](std::initializer_list<const char*> names) {
    double b = 0;
    for (const char* n : names) {
      const auto a = accuracy(n);
      b = std::max(b, *std::max_element(a.begin(), a.end()));
    }
    return b;
  };
  const int steps = r.figures["no_ffn"]["steps"], late = r.figures["no_ffn_3000_steps"]["steps"];
  const double with_ffn = worst({"ffn_2x", "ffn_4x", "ffn_8x"}), without = best({"no_ffn", "no_ffn_width_64"}),
               three = worst({"no_ffn_3_layers"}), later = best({"no_ffn_3000_steps"});
  short_budget(r.require("labs.ffn.if.with_ffn", with_ffn, Rel::ge, 0.99, steps, with_ffn));
  r.require("labs.ffn.if.without", without, Rel::lt, 0.9, steps, without);
  short_budget(r.require("labs.ffn.if.three_layers", three, Rel::ge, 0.99, steps, three));
  short_budget(r.require("labs.ffn.if.later", later, Rel::ge, 0.99, late, later));
}

// The scores s(i -> j) = q_i . k_j / sqrt(d_k) of layer 0 of a trained model: (T, T) for each head.
std::vector<std::vector<double>> layer0_scores(const nn::SequenceModel& model, const std::vector<int>& ids) {
  const nn::ModelConfig& c = model.config();
  const int T = static_cast<int>(ids.size()), C = c.d_model, dk = C / c.heads;
  std::map<std::string, ag::Tensor> p;
  for (auto& [name, t] : model.named_parameters()) p[name] = t;
  ag::NoGrad no_grad;
  const nn::ForwardOutput out = model.forward({1, T, ids, {}});
  // The block's input, as Transformer::forward builds it: embedding * sqrt(C) + PE.
  const ag::Tensor x = ag::reshape(out.inputs, {T, C}) * static_cast<ag::Scalar>(std::sqrt(static_cast<double>(C))) +
                       nn::sinusoidal_encoding(T, C);
  auto project = [&](const std::string& w) {
    return ag::linear(x, p.at("blocks.0.attn." + w + ".weight"), p.at("blocks.0.attn." + w + ".bias"));  // (T, C)
  };
  const ag::Tensor q = project("w_q"), k = c.tie_qk ? q : project("w_k");
  std::vector<std::vector<double>> scores;
  for (int h = 0; h < c.heads; ++h) {
    const ag::Tensor s =
        ag::matmul(ag::slice(q, 1, h * dk, (h + 1) * dk), ag::transpose(ag::slice(k, 1, h * dk, (h + 1) * dk)));
    scores.emplace_back(s.data().begin(), s.data().end());
    for (double& v : scores.back()) v /= std::sqrt(static_cast<double>(dk));
  }
  return scores;
}

// ||S - S^T|| / ||S|| (Frobenius) of a square matrix given row-major, and the largest |S_ij - S_ji|.
std::pair<double, double> asymmetry(const std::vector<double>& S, int n) {
  double diff = 0, norm = 0, largest = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double a = S[static_cast<std::size_t>(i * n + j)], b = S[static_cast<std::size_t>(j * n + i)];
      diff += (a - b) * (a - b);
      norm += a * a;
      largest = std::max(largest, std::abs(a - b));
    }
  return {std::sqrt(diff / norm), largest};
}

// X X^T against Q K^T: six random word vectors of width 16; random W_Q, W_K;
// then the words model trained on the toy language.
LabResult qk_asymmetry() {
  LabResult r;
  constexpr int n = 6, d = 16;
  const std::vector<std::uint64_t> seeds = trial_seeds();
  ag::Rng rng(5 + seeds.front());
  const ag::Tensor X = nn::init_matrix(n, d, nn::Init::normal, rng);
  auto to_vector = [](const ag::Tensor& t) { return std::vector<double>(t.data().begin(), t.data().end()); };
  const auto [xx_rel, xx_max] = asymmetry(to_vector(ag::matmul(X, ag::transpose(X))), n);
  const ag::Tensor Wq = nn::init_matrix(d, d, nn::Init::xavier, rng), Wk = nn::init_matrix(d, d, nn::Init::xavier, rng);
  const auto [qk_rel, qk_max] =
      asymmetry(to_vector(ag::matmul(ag::matmul(X, Wq), ag::transpose(ag::matmul(X, Wk)))), n);
  r.figures["xxt"] = {{"relative_asymmetry", xx_rel}, {"largest_difference", xx_max}};
  r.figures["random_qkt"] = {{"relative_asymmetry", qk_rel}, {"largest_difference", qk_max}};
  r.line("labs.qk-asymmetry.xxt", xx_rel, xx_max);
  r.line("labs.qk-asymmetry.qkt", qk_rel, qk_max);

  // Trained on lookback, where each position must read the tokens 1, 2 and 4 steps back: one layer of width 32,
  // 4 heads, seeds 0-2, 1000 and 3000 steps (as the trial has them), with W_Q and W_K apart and with W_K = W_Q.
  auto lookback = [](bool tie, int steps, std::uint64_t seed) {
    train::TrainConfig c = small_config({"lookback", 0, "", ""}, 4, 4, steps, seed);
    c.model.tie_qk = tie;
    c.eval_size = 256;
    return train::run_training(c, {});
  };
  // It costs accuracy if, after the longer run, the tied model is behind on every seed. (After the shorter run it
  // is behind on most seeds, not all: at 1000 steps seed 3 has it ahead, 77.5% against 76.1%.)
  std::shared_ptr<nn::SequenceModel> first_apart, first_tied;
  const int longer = trial_steps(3000);
  for (int steps : {trial_steps(1000), longer}) {
    std::vector<double> apart, tied;
    for (std::uint64_t seed : seeds) {
      const train::TrainResult a = lookback(false, steps, seed), t = lookback(true, steps, seed);
      apart.push_back(*a.eval.token_acc);
      tied.push_back(*t.eval.token_acc);
      if (!first_apart) first_apart = a.model, first_tied = t.model;
    }
    r.line_each([&](text::Lang lang) {
      return text::trf("labs.qk-asymmetry.trained", lang, steps, seeds_text(seeds, lang), row_of(apart), row_of(tied));
    });
    r.figures["trained"]["steps_" + std::to_string(steps)] = {{"accuracy_apart", apart}, {"accuracy_tied", tied}};
  }
  r.figures["trained"]["task"] = "lookback";

  // With W_K = W_Q the scores are x_i W W^T x_j: symmetric and positive semi-definite, so s(i, j) is at most the
  // geometric mean of s(i, i) and s(j, j), and a position tends to score itself highest. How often it does, in
  // the first seed's models of the shorter run, over the rows of each head on held-out sequences (each row over the
  // positions it sees).
  const auto task = tasks::make_task({"lookback", 0, "", ""});
  const tasks::Batch batch = task->eval_batches(8, 8, 1).front();
  const int T = batch.T;
  auto self_first = [&](const nn::SequenceModel& model) {
    int rows = 0, self = 0;
    for (int b = 0; b < batch.B; ++b) {
      const std::vector<int> ids(batch.tokens.begin() + static_cast<long>(b) * T,
                                 batch.tokens.begin() + static_cast<long>(b + 1) * T);
      for (const std::vector<double>& S : layer0_scores(model, ids))
        for (int i = 1; i < T; ++i) {
          const auto row = S.begin() + static_cast<long>(i) * T;
          self += std::max_element(row, row + i + 1) - row == i;
          ++rows;
        }
    }
    return static_cast<double>(self) / rows;
  };
  const double self_apart = self_first(*first_apart), self_tied = self_first(*first_tied);
  r.figures["trained"]["self_highest_share"] = {{"apart", self_apart}, {"tied", self_tied}};
  r.line("labs.qk-asymmetry.self", seeds.front(), 100 * self_apart, 100 * self_tied);
  r.line("labs.qk-asymmetry.note");
  return r;
}

void judge_qk_asymmetry(LabResult& r) {
  const auto& f = r.figures;
  const double xx_rel = f["xxt"]["relative_asymmetry"], qk_rel = f["random_qkt"]["relative_asymmetry"];
  // the longer run: the last "steps_N" of the trained figures
  int longer = 0;
  nlohmann::ordered_json last;
  for (const auto& [key, run] : f["trained"].items())
    if (key.rfind("steps_", 0) == 0) longer = std::stoi(key.substr(6)), last = run;
  const auto apart = last["accuracy_apart"].get<std::vector<double>>(),
             tied = last["accuracy_tied"].get<std::vector<double>>();
  int behind = 0;  // seeds on which the tied model is behind after the longer run
  for (std::size_t i = 0; i < apart.size(); ++i) behind += tied[i] < apart[i];
  const double self_apart = f["trained"]["self_highest_share"]["apart"],
               self_tied = f["trained"]["self_highest_share"]["tied"];
  r.require("labs.qk-asymmetry.if.xxt", xx_rel, Rel::lt, 1e-6, xx_rel);
  r.require("labs.qk-asymmetry.if.qkt", qk_rel, Rel::gt, 0.1, qk_rel);
  // The claim has the tied model behind on every seed after 3000 steps, on most after 1000, and catching up on most
  // given 6000: on another budget than the lab's, a seed on which it is not behind does not contradict it.
  own_budget(r.require("labs.qk-asymmetry.if.behind", behind, Rel::eq, static_cast<double>(apart.size()), longer,
                       behind, apart.size()));
  r.require("labs.qk-asymmetry.if.self", self_tied, Rel::gt, self_apart, 100 * self_tied, 100 * self_apart);
}

// Why V has its own projection: the fold of W_V into W_O in a one-head layer,
// then lookback with four heads, 1000 steps, seeds 0-2, with W_V, with V = X
// and with V = K.
LabResult value_proj() {
  LabResult r;
  // 1. One head, random weights: a layer without W_V whose W_O is W_V W_O (and b_O is b_V W_O + b_O: a softmax
  // row sums to 1, so the bias of V comes through whole) gives the same logits.
  const std::shared_ptr<tasks::Task> task = tasks::make_task({"lookback", 0, "", ""});
  const train::TrainConfig with = train::plan_run(small_config({"lookback", 0, "", ""}, 1, 4, 1, 0), task).config;
  nn::ModelConfig without_config = with.model;
  without_config.value_proj = false;
  const auto a = nn::make_model(with.model, 1), b = nn::make_model(without_config, 2);
  std::map<std::string, ag::Tensor> pa, pb;
  for (auto& [name, t] : a->named_parameters()) pa[name] = t;
  for (auto& [name, t] : b->named_parameters()) pb[name] = t;
  for (auto& [name, t] : pb) t.data() = pa.at(name).data();
  const std::string attn = "blocks.0.attn.";
  {
    ag::NoGrad no_grad;
    pb.at(attn + "w_o.weight").data() = ag::matmul(pa.at(attn + "w_v.weight"), pa.at(attn + "w_o.weight")).data();
    const ag::Tensor bv = ag::reshape(pa.at(attn + "w_v.bias"), {1, with.model.d_model});
    pb.at(attn + "w_o.bias").data() =
        (ag::matmul(bv, pa.at(attn + "w_o.weight")) + ag::reshape(pa.at(attn + "w_o.bias"), {1, with.model.d_model}))
            .data();
  }
  const tasks::Batch batch = task->eval_batches(16, 16, 1).front();
  const ag::Tensor za = a->forward({batch.B, batch.T, batch.tokens, {}}).logits;
  const ag::Tensor zb = b->forward({batch.B, batch.T, batch.tokens, {}}).logits;
  double diff = 0, size = 0;
  for (std::size_t i = 0; i < za.data().size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(za.data()[i]) - zb.data()[i]));
    size = std::max(size, std::abs(static_cast<double>(za.data()[i])));
  }
  r.figures["fold"] = {{"heads", 1},
                       {"params_with_w_v", a->num_parameters()},
                       {"params_without", b->num_parameters()},
                       {"largest_logit", size},
                       {"largest_difference", diff}};
  r.line("labs.value-proj.fold", a->num_parameters(), b->num_parameters(), size, diff);

  // 2. Four heads, where the fold does not exist: without W_V head h passes on only its own slice of x.
  struct Variant {
    std::string name, label;  // label: its id in the catalogue
    bool value_proj, tie_kv;
  };
  const std::vector<Variant> variants{{"w_v", "labs.value-proj.w_v", true, false},
                                      {"v_is_x", "labs.value-proj.v_is_x", false, false},
                                      {"v_is_k", "labs.value-proj.v_is_k", false, true}};
  std::map<std::string, std::vector<double>> loss;
  const int steps = trial_steps(1000);
  for (const Variant& v : variants) {
    std::vector<double> acc;
    std::size_t params = 0;
    for (std::uint64_t seed : trial_seeds()) {
      train::TrainConfig c = small_config({"lookback", 0, "", ""}, 4, 4, steps, seed);
      c.model.value_proj = v.value_proj;
      c.model.tie_kv = v.tie_kv;
      const train::TrainResult t = train::run_training(c, {});
      loss[v.name].push_back(t.eval.loss);
      acc.push_back(*t.eval.token_acc);
      params = t.params;
    }
    r.figures["four_heads"][v.name] = {{"params", params}, {"held_out_loss", loss[v.name]}, {"accuracy", acc}};
    r.line_each([&](text::Lang lang) {
      return text::trf("labs.value-proj.row", lang, text::tr(v.label, lang), params, row_of(loss[v.name]), row_of(acc));
    });
  }
  r.line_each(
      [&](text::Lang lang) { return text::trf("labs.value-proj.note", lang, steps, seeds_text(trial_seeds(), lang)); });
  return r;
}

// The fold holds to float rounding; and neither variant without W_V is behind, or ahead of, the paper's on every seed:
// their ranges over the seeds overlap.
void judge_value_proj(LabResult& r) {
  const double diff = r.figures["fold"]["largest_difference"], size = r.figures["fold"]["largest_logit"];
  r.require("labs.value-proj.if.fold", diff / std::max(1.0, size), Rel::lt, 1e-5, diff);
  const auto loss = [&](const char* name) {
    return r.figures["four_heads"][name]["held_out_loss"].get<std::vector<double>>();
  };
  const auto paper = loss("w_v");
  const auto [wlo, whi] = std::minmax_element(paper.begin(), paper.end());
  for (const char* name : {"v_is_x", "v_is_k"}) {
    const auto variant = loss(name);
    const auto [lo, hi] = std::minmax_element(variant.begin(), variant.end());
    // how far the two ranges overlap: negative when one is wholly above the other
    const double overlap = std::min(*whi, *hi) - std::max(*wlo, *lo);
    const std::string label(name);
    const auto named = [&](text::Lang lang) {  // the row's label without the padding that aligns the rows
      std::string s(text::tr("labs.value-proj." + label, lang));
      return s.substr(0, s.find_last_not_of(' ') + 1);
    };
    r.require("labs.value-proj.if.overlap", overlap, Rel::ge, 0, named(text::Lang::en), *lo, *hi, *wlo, *whi)
        .as("overlap_" + label.substr(5))
        .say("labs.value-proj.if.overlap", named(text::Lang::ko), *lo, *hi, *wlo, *whi);
  }
}

}  // namespace

void add_training_labs(std::vector<Lab>& labs) {
  labs.push_back(judged(seeded(make_lab("gates", gates), {0}, 1600), judge_gates));
  labs.push_back(judged(seeded(make_lab("gru-gradient", gru_gradient), {0}, 1600), judge_gru_gradient));
  labs.push_back(judged(seeded(make_lab("qk-asymmetry", qk_asymmetry), {0, 1, 2}, 1000), judge_qk_asymmetry));
  labs.push_back(
      judged(compared_over_seeds(seeded(make_lab("value-proj", value_proj), {0, 1, 2}, 1000)), judge_value_proj));
  labs.push_back(judged(seeded(make_lab("multi-head", multi_head), {0, 1, 2}, 4000), judge_multi_head));
  labs.push_back(judged(compared_over_seeds(seeded(make_lab("ffn", ffn), {0, 1, 2}, 1000)), judge_ffn));
}

}  // namespace seqgrad::labs
