#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/labs/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::labs {

Lab make_lab(const std::string& name, std::function<LabResult()> run, std::optional<Question> question) {
  return {name, std::string(text::tr("lab." + name + ".source", text::Lang::en)), "", std::move(run),
          std::move(question)};
}

Lab drawing(Lab lab) {
  lab.draws = true;
  return lab;
}

Lab seeded(Lab lab, std::vector<std::uint64_t> seeds, int steps) {
  lab.seeds = std::move(seeds);
  lab.steps = steps;
  return lab;
}

Lab compared_over_seeds(Lab lab) {
  lab.over_seeds = true;
  return lab;
}

Lab judged(Lab lab, std::function<void(LabResult&)> judge) {
  lab.judge = std::move(judge);
  return lab;
}

namespace {

// The lab running on this thread and its trial (Lab::run sets them).
thread_local const Lab* running = nullptr;
thread_local Trial trial;

// While it lives, `lab` runs under `t` on this thread.
struct TrialScope {
  TrialScope(const Lab* lab, const Trial& t) {
    running = lab;
    trial = t;
  }
  ~TrialScope() {
    running = nullptr;
    trial = {};
  }
};

std::string names_of(bool (*has)(const Lab&)) {
  std::string names;
  for (const Lab& lab : all_labs())
    if (has(lab)) names += (names.empty() ? "" : ", ") + lab.name;
  return names;
}

}  // namespace

void Lab::check(const Trial& t) const {
  if (!t.seeds.empty() && seeds.empty())
    throw std::invalid_argument(
        text::msg("labs.refuse.no_seeds", name, names_of([](const Lab& l) { return !l.seeds.empty(); })));
  if (over_seeds && t.seeds.size() == 1) throw std::invalid_argument(text::msg("labs.refuse.one_seed", name));
  if (t.steps && steps == 0)
    throw std::invalid_argument(
        text::msg("labs.refuse.no_steps", name, names_of([](const Lab& l) { return l.steps > 0; })));
  if (t.steps && (*t.steps < 1 || *t.steps > 1'000'000))
    throw std::invalid_argument(text::msg("labs.refuse.steps_range", *t.steps));
}

LabResult Lab::run(const Trial& t) const {
  check(t);
  const TrialScope scope(this, t);
  LabResult r = experiment();
  r.name = name;
  r.claim = claim_text(*this, text::Lang::en, t.steps);
  judge(r);
  r.settle();
  return r;
}

LabResult Lab::judge_figures(const nlohmann::ordered_json& figures, const Trial& t) const {
  check(t);
  const TrialScope scope(this, t);
  LabResult r;
  r.name = name;
  r.figures = figures;
  judge(r);
  r.settle();
  return r;
}

std::vector<std::uint64_t> trial_seeds() {
  if (!running) throw std::logic_error("trial_seeds() outside a lab");
  if (running->seeds.empty()) throw std::logic_error("the lab " + running->name + " draws at random unregistered");
  return trial.seeds.empty() ? running->seeds : trial.seeds;
}

int trial_steps(int steps) {
  if (!running) throw std::logic_error("trial_steps() outside a lab");
  if (running->steps == 0) throw std::logic_error("the lab " + running->name + " trains unregistered");
  if (!trial.steps) return steps;
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(steps) * *trial.steps / running->steps)));
}

Condition& short_budget(Condition& c) {
  if (!running) throw std::logic_error("short_budget() outside a lab");
  if (c.status == Status::failed && trial.steps && *trial.steps < running->steps)
    c.undecided("lab.why.budget", *trial.steps, running->steps);
  return c;
}

Condition& own_budget(Condition& c) {
  if (!running) throw std::logic_error("own_budget() outside a lab");
  if (c.status == Status::failed && trial.steps && *trial.steps != running->steps)
    c.undecided("lab.why.other_budget", *trial.steps, running->steps);
  return c;
}

std::string seeds_text(const std::vector<std::uint64_t>& seeds, text::Lang lang) {
  if (seeds.size() == 1) return text::trf("lab.frame.seed", lang, seeds.front());
  bool consecutive = seeds.size() > 1;
  for (std::size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[i - 1] + 1;
  if (consecutive)
    return text::trf("lab.frame.seeds", lang, std::to_string(seeds.front()) + "-" + std::to_string(seeds.back()));
  std::string list;
  for (std::size_t i = 0; i < seeds.size(); ++i) list += (i ? ", " : "") + std::to_string(seeds[i]);
  return text::trf("lab.frame.seeds", lang, list);
}

Verdict verdict_of(const LabResult& result) {
  return result.holds ? Verdict::holds : result.inconclusive ? Verdict::inconclusive : Verdict::fails;
}

Verdict verdict_over(const std::vector<LabResult>& runs) {
  if (runs.empty()) throw std::logic_error("verdict_over: no runs");
  const auto count = [&](Verdict v) {
    return std::count_if(runs.begin(), runs.end(), [&](const LabResult& r) { return verdict_of(r) == v; });
  };
  const auto n = static_cast<long>(runs.size());
  return count(Verdict::holds) == n   ? Verdict::holds
         : count(Verdict::fails) == n ? Verdict::fails
                                      : Verdict::inconclusive;
}

const std::vector<Lab>& all_labs() {
  static const std::vector<Lab> labs = [] {
    std::vector<Lab> l;
    add_chain_labs(l);
    add_attention_labs(l);
    add_position_labs(l);
    add_training_labs(l);
    add_chapter_labs(l);
    add_timing_labs(l);
    add_language_labs(l);
    // The chapter in its order (its self-checks where they fall; the gated RNNs with wall 1, where the chapter names
    // them), then the paper analysis in its order; with the seconds each took on the two-core machine the guides were
    // made on, while other work ran (the largest of two runs).
    struct Place {
      const char* name;
      double seconds;
    };
    const std::vector<Place> order{{"shared-weights", 0.1},
                                   {"two-walls", 0.3},
                                   {"sequential-time", 13},
                                   {"clipping", 2},
                                   {"gates", 49},
                                   {"gru-gradient", 4},
                                   {"fixed-state", 90},
                                   {"attention-by-hand", 0.1},
                                   {"context-vector", 0.0},
                                   {"attention-learned", 0.8},
                                   {"no-position", 0.0},
                                   {"quadratic-cost", 0.8},
                                   {"attention-memory", 0.1},
                                   {"attention-share", 25},
                                   {"attention-as-rnn", 1},
                                   {"qk-asymmetry", 30},
                                   {"value-proj", 11},
                                   {"sqrt-dk", 0.3},
                                   {"sqrt-dk-training", 15},
                                   {"multi-head", 22},
                                   {"agreement", 8},
                                   {"pe-shift", 0.1},
                                   {"ffn", 20},
                                   {"path-length", 0.1},
                                   {"rope", 0.0},
                                   {"length-generalisation", 17},
                                   {"rope-window", 10}};
    auto rank = [&](const Lab& lab) {
      return std::find_if(order.begin(), order.end(), [&](const Place& p) { return p.name == lab.name; }) -
             order.begin();
    };
    std::stable_sort(l.begin(), l.end(), [&](const Lab& a, const Lab& b) { return rank(a) < rank(b); });
    for (Lab& lab : l) {
      if (rank(lab) == static_cast<long>(order.size())) throw std::logic_error("lab " + lab.name + " has no place");
      lab.seconds = order[static_cast<std::size_t>(rank(lab))].seconds;
    }
    for (Lab& lab : l) lab.claim = claim_text(lab, text::Lang::en);  // with its own budget, now that it is set
    for (const Lab& lab : l) {
      // Every lab has a "try this" line, and one that asks a question its wording, in the catalogue.
      const std::string id = "lab." + lab.name;
      if (!text::has(id + ".try") || (lab.question && !(text::has(id + ".question") && text::has(id + ".format"))))
        throw std::logic_error("the catalogue lacks texts of " + id);
      if (!lab.judge) throw std::logic_error("the lab " + lab.name + " has no judge");
    }
    return l;
  }();
  return labs;
}

std::string source_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".source", lang));
}
std::string claim_text(const Lab& lab, text::Lang lang, std::optional<int> steps) {
  // A claim that names its budget has a field for it: the run's, which --steps may change.
  return text::trf("lab." + lab.name + ".claim", lang, steps.value_or(lab.steps));
}
std::string question_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".question", lang));
}
std::string format_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".format", lang));
}

std::vector<double> parse_answer_numbers(const std::string& answer, const std::string& format) {
  std::vector<double> out;
  std::string word;
  // A unit word after a number ("100x", "100 times", "100배", "x100") says how many times: the number is the answer.
  const auto ends_with = [](const std::string& w, const std::string& tail) {
    return w.size() > tail.size() && w.compare(w.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::vector<std::string> units{"times", "x", "X", "\xC3\x97" /* × */, "\xEB\xB0\xB0" /* 배 */};
  auto take = [&] {
    if (word.empty()) return;
    const bool unit_alone = std::find(units.begin(), units.end(), word) != units.end();
    if (unit_alone && !out.empty()) {  // "100 times", "100 배": the unit of the number before it
      word.clear();
      return;
    }
    std::string number = word;
    for (const std::string& unit : units)
      if (ends_with(number, unit)) {
        number.resize(number.size() - unit.size());
        break;
      }
    for (const std::string& unit : {std::string("x"), std::string("\xC3\x97")})  // "x100", "×100"
      if (number.size() > unit.size() && number.compare(0, unit.size(), unit) == 0 &&
          std::isdigit(static_cast<unsigned char>(number[unit.size()])))
        number.erase(0, unit.size());
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Decimal numbers only: strtod would also read hex floats (0x1p3) and "inf".
    const bool decimal = number.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!decimal || used != number.size() || !std::isfinite(x))
      throw std::invalid_argument(text::msg("labs.answer.not_a_number", answer, word, format));
    out.push_back(x);
    word.clear();
  };
  for (char c : answer) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      take();
    } else {
      word += c;
    }
  }
  take();
  if (out.empty()) throw std::invalid_argument(text::msg("labs.answer.empty", format));
  return out;
}

const Lab& find_lab(const std::string& name) {
  std::string names;
  for (const Lab& lab : all_labs()) {
    if (lab.name == name) return lab;
    names += (names.empty() ? "" : ", ") + lab.name;
  }
  throw std::invalid_argument(text::msg("labs.refuse.unknown", name, names));
}

}  // namespace seqgrad::labs
