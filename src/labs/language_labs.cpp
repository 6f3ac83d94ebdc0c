// Labs on the toy language of data/toylang.txt: what a word-level Transformer
// trained on it does where a verb must agree with a subject a relative clause
// away ("the cat that the dogs chase sleeps").
#include <fmt/core.h>
#include <algorithm>
#include <cmath>

#include "src/labs/registry.h"
#include "src/nn/model.h"
#include "src/tasks/task.h"
#include "src/tasks/toy_language.h"
#include "src/train/run.h"
#include "src/train/trainer.h"

namespace seqgrad::labs {

namespace {

// ". the N1 that the N2 V2": every subject N1, every other noun N2 of the
// other number, every transitive verb V2 agreeing with N2. What comes next is
// the main verb of N1 (or more of the subject: "that", "near", ...), so a model
// that agrees with the nearer noun N2 is wrong on every one.
struct Probe {
  std::vector<int> tokens;  // (B, T) of the prompts
  std::vector<bool> plural_subject;
  int B = 0;
};
constexpr int kProbeT = 7, kSubject = 2, kAttractor = 5;

Probe agreement_probe(const tasks::Task& task) {
  Probe p;
  const auto nouns = tasks::toy_nouns();
  for (std::size_t a = 0; a < nouns.size(); ++a)
    for (std::size_t b = 0; b < nouns.size(); ++b) {
      if (a == b) continue;
      for (bool plural : {false, true})
        for (const tasks::NumberForms& v : tasks::toy_transitive_verbs()) {
          const std::string n1 = plural ? nouns[a].plural : nouns[a].singular;
          const std::string n2 = plural ? nouns[b].singular : nouns[b].plural;
          const std::vector<int> ids =
              task.encode(". the " + n1 + " that the " + n2 + " " + (plural ? v.singular : v.plural));
          p.tokens.insert(p.tokens.end(), ids.begin(), ids.end());
          p.plural_subject.push_back(plural);
          ++p.B;
        }
    }
  return p;
}

struct AgreementFigures {
  double agrees = 0;  // share of prompts where the subject's verb form is the likelier
  // By head of the last layer: the clause's last word's mean weight on each word of the prompt.
  std::vector<std::vector<double>> rows;
};

AgreementFigures measure(const nn::SequenceModel& model, const tasks::Task& task, const Probe& p) {
  // The verbs' forms as token ids, singular and plural (each form is its own word).
  auto ids = [&](bool plural) {
    std::vector<int> out;
    for (const tasks::NumberForms& v : tasks::toy_verbs())
      out.push_back(task.encode(plural ? v.plural : v.singular).at(0));
    return out;
  };
  const std::vector<int> singular = ids(false), plural = ids(true);

  nn::ForwardOptions o;
  o.capture.attention = true;
  const nn::ForwardOutput out = model.forward({p.B, kProbeT, p.tokens, {}}, o);
  const ag::Tensor& w = out.attention.back();  // (B, heads, T, T)
  const int H = w.shape()[1], V = out.logits.size(2), T = kProbeT;
  AgreementFigures f;
  f.rows.assign(static_cast<std::size_t>(H), std::vector<double>(static_cast<std::size_t>(T), 0.0));
  int right = 0;
  for (int b = 0; b < p.B; ++b) {
    // At the last position, the likelier number is the one whose forms' logits have the larger log-sum-exp.
    const auto* z = out.logits.data().data() + (static_cast<std::size_t>(b) * T + (T - 1)) * V;
    auto mass = [&](const std::vector<int>& forms) {
      double m = -INFINITY, s = 0;
      for (int id : forms) m = std::max(m, static_cast<double>(z[id]));
      for (int id : forms) s += std::exp(static_cast<double>(z[id]) - m);
      return m + std::log(s);
    };
    const double one = mass(singular), many = mass(plural);
    right += p.plural_subject[static_cast<std::size_t>(b)] ? many > one : one > many;
    for (int h = 0; h < H; ++h) {
      const auto* row = w.data().data() + ((static_cast<std::size_t>(b) * H + h) * T + (T - 1)) * T;
      for (int t = 0; t < T; ++t) f.rows[static_cast<std::size_t>(h)][static_cast<std::size_t>(t)] += row[t] / p.B;
    }
  }
  f.agrees = static_cast<double>(right) / p.B;
  return f;
}

std::string row_text(const std::vector<double>& row) {
  static const char* words[kProbeT] = {".", "the", "N1", "that", "the", "N2", "V2"};
  std::string s;
  for (std::size_t t = 0; t < row.size(); ++t) s += fmt::format(" {} {:.2f}", words[t], row[t]);
  return s;
}

// A word-level Transformer (two layers, width 32, two heads) trained on the toy
// language, three seeds; before and after training: does the verb agree with
// its subject across a relative clause, and where does the clause's last word
// look in the second layer?
LabResult agreement() {
  LabResult r;
  const int kSteps = trial_steps(1500);
  const tasks::TaskOptions words{"words", 0, "", ""};
  const std::shared_ptr<tasks::Task> task = tasks::make_task(words);
  const Probe probe = agreement_probe(*task);
  r.line("labs.agreement.prompts", probe.B);
  for (std::uint64_t seed : trial_seeds()) {
    train::TrainConfig c = small_config(words, 2, 4, kSteps, seed);
    c.model.layers = 2;
    const train::Run fresh = train::make_run(c, task);  // the model training starts from
    const AgreementFigures before = measure(*fresh.model, *task, probe);
    train::RunOptions once;
    once.task = task;
    const train::TrainResult trained = train::run_training(fresh.config, once);
    const AgreementFigures after = measure(*trained.model, *task, probe);
    // The head that looks most at the subject, after training.
    std::size_t top = 0;
    for (std::size_t h = 1; h < after.rows.size(); ++h)
      if (after.rows[h][kSubject] > after.rows[top][kSubject]) top = h;
    r.figures["seeds"].push_back({{"seed", seed},
                                  {"agrees_before", before.agrees},
                                  {"agrees_after", after.agrees},
                                  {"subject_head", top},
                                  {"layer2_rows_after", after.rows},
                                  {"layer2_rows_before", before.rows},
                                  {"held_out_accuracy", *trained.eval.token_acc}});
    r.line("labs.agreement.seed", seed, 100 * before.agrees, 100 * after.agrees, kSteps, top);
    for (std::size_t h = 0; h < after.rows.size(); ++h) r.line("labs.agreement.before", h, row_text(before.rows[h]));
    for (std::size_t h = 0; h < after.rows.size(); ++h) r.line("labs.agreement.after", h, row_text(after.rows[h]));
  }
  r.line("labs.agreement.note", kSteps, 1.0 / kProbeT);
  return r;
}

// Agreement on nearly every prompt, and a head that gives the subject most of its weight and the nearer noun next to
// none. The worst seed's figure for each.
void judge_agreement(LabResult& r) {
  double agrees = 1, subject = 1, attractor = 0;
  for (const auto& seed : r.figures["seeds"]) {
    const auto looks = seed["layer2_rows_after"][seed["subject_head"].get<std::size_t>()].get<std::vector<double>>();
    agrees = std::min(agrees, seed["agrees_after"].get<double>());
    subject = std::min(subject, looks[kSubject]);
    attractor = std::max(attractor, looks[kAttractor] / looks[kSubject]);
  }
  short_budget(r.require("labs.agreement.if.agrees", agrees, Rel::ge, 0.9, 100 * agrees));
  short_budget(r.require("labs.agreement.if.subject", subject, Rel::gt, 0.5, subject));
  r.require("labs.agreement.if.attractor", attractor, Rel::lt, 0.1, attractor);
}

}  // namespace

void add_language_labs(std::vector<Lab>& labs) {
  labs.push_back(judged(seeded(make_lab("agreement", agreement), {0, 1, 2}, 1500), judge_agreement));
}

}  // namespace seqgrad::labs
