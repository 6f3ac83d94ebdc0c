// The chapter's claims as experiments. Each lab computes its figures, then
// decides from them whether the claim holds; nothing in a verdict is typed in.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/text/catalogue.h"

#include <nlohmann/json.hpp>

namespace seqgrad::labs {

// A figure drawn, for `seqgrad lab NAME --svg DIR` (and the guides' pictures).
struct Picture {
  std::string file;  // a file name: "pe-heatmap.svg"
  std::string svg;
};

// One condition of a lab's claim: a figure of the run against a threshold. The verdict is made of them: the claim
// holds when every condition held, does not hold when one failed (its figure contradicts the claim), and is
// inconclusive when none failed but one could not be decided (a budget too short, a busy core), with the reason.
enum class Status { held, failed, inconclusive };
enum class Rel { lt, le, gt, ge, eq };  // how the figure must stand to the threshold: <, <=, >, >=, =

struct Condition {
  std::string id;             // short and stable, for --json and the tests: "faster"
  std::string text, text_ko;  // the condition with its figures, in either language
  double figure = 0, threshold = 0;
  Rel rel = Rel::ge;
  Status status = Status::failed;
  std::string why, why_ko;  // inconclusive: why these figures cannot decide it
  const std::string& text_in(text::Lang lang) const { return lang == text::Lang::ko ? text_ko : text; }
  const std::string& why_in(text::Lang lang) const { return lang == text::Lang::ko ? why_ko : why; }

  // The same condition under another id (one text for several conditions: "flops_above_64", "flops_above_512").
  Condition& as(std::string other_id) {
    id = std::move(other_id);
    return *this;
  }
  // Its Korean text from `id` with `args` (for a field that is itself a word of either language).
  template <class... A>
  Condition& say(std::string_view text_id, const A&... args) {
    text_ko = text::trf(text_id, text::Lang::ko, args...);
    return *this;
  }
  // This condition left undecided, with the catalogue's reason `id` (its fields filled with `args`): the run's
  // budget or machine could not show it either way, whatever its figure says.
  template <class... A>
  Condition& undecided(std::string_view reason_id, const A&... args) {
    status = Status::inconclusive;
    why = text::trf(reason_id, text::Lang::en, args...);
    why_ko = text::trf(reason_id, text::Lang::ko, args...);
    return *this;
  }
};

// Whether `figure` stands to `threshold` as `rel` says.
bool satisfies(double figure, Rel rel, double threshold);

struct LabResult {
  std::string name;
  std::string claim;                  // the sentence from the chapter or the paper analysis being tested
  nlohmann::ordered_json figures;     // every number the verdict is computed from
  std::vector<std::string> lines;     // the figures explained, for people, in English
  std::vector<std::string> lines_ko;  // the same lines in Korean, one for one
  // Set from the conditions when the experiment ends (Lab::run): holds when every condition held; inconclusive
  // when none failed and one could not be decided (`holds` is false then).
  bool holds = false;
  bool inconclusive = false;
  std::vector<Condition> conditions;  // every lab has at least one
  std::vector<Picture> pictures;      // the labs with Lab::draws only

  // A figure line in both languages: the catalogue's `id` ("labs.NAME.xxx"), its fields filled with `args`.
  template <class... A>
  void line(std::string_view id, const A&... args) {
    lines.push_back(text::trf(id, text::Lang::en, args...));
    lines_ko.push_back(text::trf(id, text::Lang::ko, args...));
  }
  // A figure line whose fields are words as well as numbers: `make(lang)` writes it in either language.
  template <class F>
  void line_each(F make) {
    lines.push_back(make(text::Lang::en));
    lines_ko.push_back(make(text::Lang::ko));
  }
  // A condition of the claim: `figure` must stand to `threshold` as `rel` says, held or failed by that. Its text is
  // the catalogue's `id` ("labs.NAME.if.ID", whose last part is the condition's id) with `args` filled in. The
  // reference returned is good until the next require (which may move the conditions).
  template <class... A>
  Condition& require(std::string_view id, double figure, Rel rel, double threshold, const A&... args) {
    Condition c;
    c.id = std::string(id.substr(id.rfind('.') + 1));
    c.text = text::trf(id, text::Lang::en, args...);
    c.text_ko = text::trf(id, text::Lang::ko, args...);
    c.figure = figure;
    c.threshold = threshold;
    c.rel = rel;
    c.status = satisfies(figure, rel, threshold) ? Status::held : Status::failed;
    conditions.push_back(std::move(c));
    return conditions.back();
  }
  // holds and inconclusive from the conditions (Lab::run calls it; a lab with no condition is a bug).
  void settle();
  // The figure lines in `lang`.
  const std::vector<std::string>& lines_in(text::Lang lang) const { return lang == text::Lang::ko ? lines_ko : lines; }
};

// A self-check question of the chapter that a lab answers: the student's own
// answer, given before the lab shows its figures, is graded against them.
struct Grade {
  bool right = false;
  std::string message;  // one line: what was right, or what the answer is and why
};
// Its wording is the catalogue's (question_text, format_text).
struct Question {
  // Throws std::invalid_argument (one line) for an answer not in the lab's
  // format; the message of the grade is in `lang`.
  std::function<Grade(const std::string& answer, const LabResult& result, text::Lang lang)> grade;
  // Throws std::invalid_argument (one line) for an answer not in the lab's format, before any figure is computed.
  std::function<void(const std::string& answer)> check;
};

// How a student tries to break a verdict: the lab's experiment on other seeds
// (in place of the lab's own), or its training runs longer or shorter (the
// lab's main run exactly `steps`, its other runs in proportion).
struct Trial {
  std::vector<std::uint64_t> seeds{};  // none: the lab's own
  std::optional<int> steps = std::nullopt;
};

struct Lab {
  std::string name;
  // In English, from the catalogue (lab.NAME.source, lab.NAME.claim; source_text and claim_text give either language).
  std::string source;  // where the claim comes from: "chapter 17, self-check 2", "paper analysis: sqrt(d_k)"
  std::string claim;   // with the lab's own budget; claim_text() writes it for another
  std::function<LabResult()> experiment;  // reads the trial through trial_seeds() and trial_steps() (registry.h)
  std::optional<Question> question = std::nullopt;  // the labs that answer a self-check question
  bool draws = false;                               // its result carries pictures
  std::vector<std::uint64_t> seeds{};               // the seeds it trains or draws on; none: nothing in it is random
  int steps = 0;                                    // its main training run's steps; 0: it does not train
  // Its claim compares seeds (most of them learn; their spreads overlap), so it runs on two or more at once; the
  // others' claims hold or fail on each seed alone.
  bool over_seeds = false;
  double seconds = 0;  // how long it takes, about, on the machine the guides were made on (lab --list)
  // The verdict's conditions, from the result's figures alone: a test can feed it figures of its own (figures that
  // contradict the claim must fail it). Run after the experiment; the trial is readable as in the experiment. Every
  // lab has one (all_labs checks).
  std::function<void(LabResult&)> judge = nullptr;

  // The experiment, its result named and with its claim. Throws std::invalid_argument (one line) for a trial the
  // lab cannot take: a seed for a lab that draws nothing at random, one seed for a lab whose claim compares seeds,
  // steps for one that does not train.
  LabResult run(const Trial& trial = {}) const;
  // The refusals of run, without running: throws std::invalid_argument for a trial the lab cannot take.
  void check(const Trial& trial) const;
  // The verdict on `figures` (a run's, or a test's own) as if a run under `trial` had measured them.
  LabResult judge_figures(const nlohmann::ordered_json& figures, const Trial& trial = {}) const;
};

// A lab's verdict, and the verdict over the runs of one lab on several seeds:
// holds when it holds on every seed, does not hold when it fails on every
// seed, and inconclusive when the seeds split or a run could not decide.
enum class Verdict { holds, fails, inconclusive };
Verdict verdict_of(const LabResult& result);
Verdict verdict_over(const std::vector<LabResult>& runs);
// "seeds 0-2", "seed 5", "seeds 0, 3, 4": for the lines a lab prints; in `lang`, "시드 0-2".
std::string seeds_text(const std::vector<std::uint64_t>& seeds, text::Lang lang = text::Lang::en);

// The conditions as the terminal shows them, one numbered line each ("  2. failed  ..."), and the verdict line that
// names the conditions that decided it, in `lang`.
std::vector<std::string> condition_lines(const LabResult& result, text::Lang lang);
std::string verdict_line(const LabResult& result, text::Lang lang);
// The conditions for --json and the page: [{id, text, figure, threshold, relation, status, why}].
nlohmann::ordered_json conditions_json(const LabResult& result, text::Lang lang);
// The conditions back from conditions_json's form with both languages (the lab cache).
nlohmann::ordered_json conditions_to_json(const std::vector<Condition>& conditions);
std::vector<Condition> conditions_from_json(const nlohmann::json& j);
const char* status_word(Status s);  // "held", "failed", "inconclusive"

// The numbers of an answer, separated by commas or spaces; a trailing 'x' on
// each is allowed ("100x"). Throws std::invalid_argument naming `format`.
std::vector<double> parse_answer_numbers(const std::string& answer, const std::string& format);

// The verdict of lab sequential-time, from its figures (timing_labs.cpp). Apart from the lab so that a test can
// check the rule on figures of its own: the lab's times are this machine's, and a test never asserts a time.
Verdict sequential_time_verdict(const nlohmann::ordered_json& figures);
void sequential_time_conditions(LabResult& result);  // its conditions, from result.figures

const std::vector<Lab>& all_labs();
// A lab's source, claim, question and answer format in `lang`, from the catalogue.
std::string source_text(const Lab& lab, text::Lang lang);
// The claim names the main run's budget where it has one: the lab's own steps, or `steps` (the student's --steps).
std::string claim_text(const Lab& lab, text::Lang lang, std::optional<int> steps = std::nullopt);
std::string question_text(const Lab& lab, text::Lang lang);
std::string format_text(const Lab& lab, text::Lang lang);
const Lab& find_lab(const std::string& name);  // throws std::invalid_argument listing the names

// attention-by-hand with the user's own vectors: query, then the keys (which are also the values).
LabResult attention_by_hand(const std::vector<std::vector<double>>& vectors, int query);

}  // namespace seqgrad::labs
