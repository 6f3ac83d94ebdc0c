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

struct LabResult {
  std::string name;
  std::string claim;                  // the sentence from the chapter or the paper analysis being tested
  nlohmann::ordered_json figures;     // every number the verdict is computed from
  std::vector<std::string> lines;     // the figures explained, for people, in English
  std::vector<std::string> lines_ko;  // the same lines in Korean, one for one
  bool holds = false;
  // The lab's own measurement could not decide (a timed lab on a machine whose second core was busy):
  // neither holds nor fails; `holds` is false, and a line of `lines` says why.
  bool inconclusive = false;
  std::vector<Picture> pictures;  // the labs with Lab::draws only

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
  std::string claim;
  std::function<LabResult()> experiment;  // reads the trial through trial_seeds() and trial_steps() (registry.h)
  std::optional<Question> question = std::nullopt;  // the labs that answer a self-check question
  bool draws = false;                               // its result carries pictures
  std::vector<std::uint64_t> seeds{};               // the seeds it trains or draws on; none: nothing in it is random
  int steps = 0;                                    // its main training run's steps; 0: it does not train
  // Its claim compares seeds (most of them learn; their spreads overlap), so it runs on two or more at once; the
  // others' claims hold or fail on each seed alone.
  bool over_seeds = false;
  double seconds = 0;  // how long it takes, about, on the machine the guides were made on (lab --list)

  // The experiment, its result named and with its claim. Throws std::invalid_argument (one line) for a trial the
  // lab cannot take: a seed for a lab that draws nothing at random, one seed for a lab whose claim compares seeds,
  // steps for one that does not train.
  LabResult run(const Trial& trial = {}) const;
  // The refusals of run, without running: throws std::invalid_argument for a trial the lab cannot take.
  void check(const Trial& trial) const;
};

// A lab's verdict, and the verdict over the runs of one lab on several seeds:
// holds when it holds on every seed, does not hold when it fails on every
// seed, and inconclusive when the seeds split or a run could not decide.
enum class Verdict { holds, fails, inconclusive };
Verdict verdict_of(const LabResult& result);
Verdict verdict_over(const std::vector<LabResult>& runs);
// "seeds 0-2", "seed 5", "seeds 0, 3, 4": for the lines a lab prints; in `lang`, "시드 0-2".
std::string seeds_text(const std::vector<std::uint64_t>& seeds, text::Lang lang = text::Lang::en);

// The numbers of an answer, separated by commas or spaces; a trailing 'x' on
// each is allowed ("100x"). Throws std::invalid_argument naming `format`.
std::vector<double> parse_answer_numbers(const std::string& answer, const std::string& format);

// The verdict of lab sequential-time, from its figures (timing_labs.cpp). Apart from the lab so that a test can
// check the rule on figures of its own: the lab's times are this machine's, and a test never asserts a time.
Verdict sequential_time_verdict(const nlohmann::ordered_json& figures);

const std::vector<Lab>& all_labs();
// A lab's source, claim, question and answer format in `lang`, from the catalogue.
std::string source_text(const Lab& lab, text::Lang lang);
std::string claim_text(const Lab& lab, text::Lang lang);
std::string question_text(const Lab& lab, text::Lang lang);
std::string format_text(const Lab& lab, text::Lang lang);
const Lab& find_lab(const std::string& name);  // throws std::invalid_argument listing the names

// attention-by-hand with the user's own vectors: query, then the keys (which are also the values).
LabResult attention_by_hand(const std::vector<std::vector<double>>& vectors, int query);

}  // namespace seqgrad::labs
