// The training loop: draw a batch, forward, loss, backward, clip, step; log
// every step, checkpoint, evaluate on held-out data at the end.
//
// Batch k of a run is drawn from a generator seeded by (seed, k) alone, so a
// resumed run sees exactly the batches the uninterrupted one would have.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/train/config.h"

namespace seqgrad::train {

struct StepLog {
  long step = 0;
  double loss = 0;
  std::optional<double> accuracy;  // token accuracy on this batch's scored positions; none for a regression
  double grad_norm = 0;            // global norm before clipping
  double lr = 0;
  double elapsed = 0;  // seconds since the run (or the resumed part) began
};

struct DistanceBucket {
  int lo = 0, hi = 0;  // distances [lo, hi]
  long count = 0;
  double accuracy = 0;
};

struct EvalResult {
  long sequences = 0;
  double loss = 0;
  std::optional<double> token_acc, seq_acc, mse;
  std::vector<DistanceBucket> by_distance;  // accuracy of scored positions grouped by distance
};

struct TrainResult {
  TrainConfig config;
  std::size_t params = 0;
  long start_step = 0;       // > 0 when resumed
  long steps_done = 0;       // the last step taken
  bool interrupted = false;  // stopped by RunOptions::stop; `stage` says where
  enum class Stage { loading, training, evaluating } stage = Stage::training;
  std::vector<StepLog> log;
  EvalResult eval;
  double seconds = 0;
  double ms_per_step = 0;
  std::shared_ptr<nn::SequenceModel> model;  // as trained
  std::shared_ptr<tasks::Task> task;         // the task it was trained on (its text read once)
};

// What the loop tells whoever is watching (a progress bar, a log printer).
struct TrainObserver {
  std::function<void(const StepLog&, long total_steps)> on_step;
  std::function<void(const std::string&)> on_message;
};

struct RunOptions {
  std::string out_dir;                      // where the log and checkpoint go; empty: nowhere
  std::string resume_dir;                   // continue the run saved here (its config wins, but for steps)
  bool overwrite = false;                   // a fresh run may replace another run's files in out_dir
  std::optional<int> steps;                 // with resume: the new total step count
  std::optional<int> checkpoint_every;      // with resume: a new checkpoint interval
  std::optional<int> eval_size;             // with resume: a new size of the final evaluation
  std::string text;                         // with resume: read the run's text (lm, words) from here
  std::shared_ptr<tasks::Task> task;        // a fresh run's task, made once by the caller; none: made here
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler) to finish the step, save and return
  TrainObserver observer;
  // Called before the first step, after every `inspect_every` steps and after the last, with the
  // model as it is then (for a gradient heatmap over training); 0: never.
  int inspect_every = 0;
  std::function<void(long step, const nn::SequenceModel& model)> inspect;
};

TrainResult run_training(TrainConfig config, const RunOptions& options);

// Refuses (std::runtime_error, one line), before anything large is allocated, a
// run whose estimated memory is more than this machine (or this process's
// limits) can give it.
void check_memory(const TrainConfig& config, const tasks::TaskInfo& info);

// Scores a model on the task's held-out set (eval_size sequences). With
// `stop`, checked between batches: when it is set, throws Interrupted.
EvalResult evaluate(const nn::SequenceModel& model, const tasks::Task& task, int eval_size, int batch,
                    std::uint64_t seed, const std::atomic<bool>* stop = nullptr);
struct Interrupted {};

// The seed of the held-out set for a run seed: a different stream from training's.
std::uint64_t eval_seed(std::uint64_t seed);

}  // namespace seqgrad::train
