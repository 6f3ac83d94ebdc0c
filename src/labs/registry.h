// Each family of labs adds itself to the list. Internal to src/labs.
#pragma once

#include "src/labs/lab.h"
#include "src/train/config.h"

namespace seqgrad::labs {

// A lab with its source and claim as the catalogue has them in English
// (src/text/catalogue_web.inc holds both languages: the browser bench shows either).
Lab make_lab(const std::string& name, std::function<LabResult()> run, std::optional<Question> question = std::nullopt);
// The same lab, marked as one whose result carries pictures.
Lab drawing(Lab lab);
// The same lab, marked as one that draws at random (`seeds`, its own) and, for
// `steps` > 0, trains, its main run for `steps`: a student may change either.
Lab seeded(Lab lab, std::vector<std::uint64_t> seeds, int steps = 0);
// The same lab, marked as one whose claim compares its seeds (Lab::over_seeds).
Lab compared_over_seeds(Lab lab);
// The same lab, its verdict's conditions written by `judge` from the result's figures alone (Lab::judge).
Lab judged(Lab lab, std::function<void(LabResult&)> judge);

// attention-by-hand's figures and lines (the weights of `query` over `vectors`), without a verdict
// (attention_labs.cpp); attention_by_hand() judges them.
LabResult by_hand_figures(const std::vector<std::vector<double>>& vectors, int query);

// Inside a lab's experiment, the trial it runs: the seeds to train or draw on
// (the lab's own, or those the student gave), and a training run's steps,
// `steps` as the lab has it scaled so that its main run takes the student's
// --steps (at least 1).
std::vector<std::uint64_t> trial_seeds();
int trial_steps(int steps);
// A condition that needs training to reach a target: failed on a budget shorter than the lab's own, it is left
// undecided (these figures cannot say whether the lab's budget would reach it), with the reason.
Condition& short_budget(Condition& c);
// A condition the claim states for the lab's own budget alone ("behind on every seed after 3000 steps"): failed on
// another budget, it is left undecided, with the reason.
Condition& own_budget(Condition& c);

// The small Transformer the trained labs use: one layer of width 32, `heads`
// heads, an FFN ffn_mult times as wide (none for 0), Adam at 3e-3, warmup then
// cosine over `steps`, as `seqgrad train` would run it (training_labs.cpp).
train::TrainConfig small_config(const tasks::TaskOptions& task, int heads, int ffn_mult, int steps, std::uint64_t seed);

// Whether this machine is busy: a fixed loop on two threads at once against one thread (timing_labs.cpp); about 1
// when the second core is free, 1.5 and more when another process wants it. Above kBusyCore, a time that
// contradicts a claim is left undecided.
double second_core_cost();
// The same for this thread alone: the loop's wall time over its CPU time, about 1 when this thread has a core to
// itself; for the labs that time one thread.
double own_core_cost();
constexpr double kBusyCore = 1.3;

void add_attention_labs(std::vector<Lab>& labs);  // attention_labs.cpp
void add_position_labs(std::vector<Lab>& labs);   // position_labs.cpp
void add_chain_labs(std::vector<Lab>& labs);      // chain_labs.cpp
void add_training_labs(std::vector<Lab>& labs);   // training_labs.cpp
void add_chapter_labs(std::vector<Lab>& labs);    // chapter_labs.cpp
void add_timing_labs(std::vector<Lab>& labs);     // timing_labs.cpp
void add_language_labs(std::vector<Lab>& labs);   // language_labs.cpp

}  // namespace seqgrad::labs
