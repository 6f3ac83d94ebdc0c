#include "src/train/trainer.h"
#include "src/train/run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>

#include "src/io/files.h"
#include "src/io/memory.h"
#include "src/text/catalogue.h"
#include "src/train/checkpoint.h"
#include "src/train/loss.h"

namespace seqgrad::train {

namespace {

// A generator for (seed, step, stream): the batch of step k, or its dropout masks.
ag::Rng step_rng(std::uint64_t seed, long step, std::uint64_t stream) {
  return ag::Rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(step) * 0xBF58476D1CE4E5B9ULL + stream);
}

// The first parameter whose gradient holds a NaN or an infinity, or "".
std::string first_non_finite(const nn::SequenceModel& model) {
  for (const auto& [name, p] : model.named_parameters()) {
    for (ag::Scalar g : p.grad())
      if (!std::isfinite(g)) return name;
    for (ag::Scalar v : p.data())
      if (!std::isfinite(v)) return name;
  }
  return "";
}

// The log keeps one row per step; a resumed run keeps the rows up to its start.
// The kept rows are written whole (io::write_file: a kill at any moment leaves
// the old log or the new one, never a part), then rows are appended; every
// write is checked, so a full disk is a failure, not a gap.
class CsvLog {
 public:
  CsvLog(const std::string& dir, long keep_until) {
    if (dir.empty()) return;
    path_ = (std::filesystem::path(dir) / kLogFile).string();
    std::vector<std::string> kept;
    if (keep_until > 0) {
      std::ifstream in(path_);
      std::string line;
      std::getline(in, line);  // header
      for (int number = 2; std::getline(in, line); ++number) {
        // A last line without its six fields and its newline is a write cut short (a full disk): not a row.
        if (in.eof() && std::count(line.begin(), line.end(), ',') != 5) break;
        long step = 0;
        try {
          std::size_t used = 0;
          step = std::stol(line.substr(0, line.find(',')), &used);
        } catch (const std::exception&) {
          throw std::runtime_error(text::msg("train.log_damaged", path_, number));
        }
        if (step > keep_until) break;
        kept.push_back(line);
      }
    }
    std::string text = "step,loss,accuracy,grad_norm,lr,elapsed_s\n";
    for (const auto& l : kept) text += l + "\n";
    io::write_file(path_, text);
    out_.open(path_, std::ios::app);
    if (!out_) throw std::runtime_error(text::msg("io.cannot_write", path_, io::reason(errno)));
  }
  void add(const StepLog& s) {
    if (!out_.is_open()) return;
    out_ << s.step << ',' << s.loss << ',';
    if (s.accuracy) out_ << *s.accuracy;  // empty for a regression
    out_ << ',' << s.grad_norm << ',' << s.lr << ',' << s.elapsed << '\n';
    check();
  }
  void flush() {
    if (!out_.is_open()) return;
    out_.flush();
    check();
  }

 private:
  void check() const {
    if (!out_) throw std::runtime_error(text::msg("io.cannot_write", path_, io::reason(errno ? errno : EIO)));
  }
  std::string path_;
  std::ofstream out_;
};

// --overwrite replaces a run only once the new one is valid: its checkpoint
// and log are moved into DIR/.replaced/ when the new run starts training, and
// deleted when the new run has written its first checkpoint. Until then, any
// failure moves them back; so does the next run in DIR after a kill.
class SetAside {
 public:
  explicit SetAside(std::string dir) : dir_(std::move(dir)), aside_(std::filesystem::path(dir_) / kReplacedDir) {}
  // After a kill between set-aside and the first checkpoint: the old run comes back.
  bool restore_interrupted() {
    std::error_code ec;
    if (dir_.empty() || !std::filesystem::is_directory(aside_, ec)) return false;
    restore();
    return true;
  }
  void set_aside() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(fs::path(dir_) / kLogFile, ec) && !fs::exists(fs::path(dir_) / kCheckpointFile, ec)) return;
    fs::create_directories(aside_, ec);
    if (ec) throw std::runtime_error(text::msg("train.cannot_create", aside_.string(), io::reason(ec)));
    active_ = true;
    for (const char* name : {kLogFile, kCheckpointFile}) {  // in this order: restore() relies on it
      const fs::path from = fs::path(dir_) / name;
      if (!fs::exists(from, ec)) continue;
      fs::rename(from, aside_ / name, ec);
      if (ec) throw std::runtime_error(text::msg("train.cannot_move_aside", from.string(), io::reason(ec)));
    }
  }
  bool active() const { return active_; }
  // The new run is valid: the old one goes.
  void commit() {
    if (!active_) return;
    std::error_code ec;
    std::filesystem::remove_all(aside_, ec);
    active_ = false;
  }
  ~SetAside() {
    try {  // on the way out of a std::bad_alloc too: nothing may throw from here
      if (active_) restore();
    } catch (...) {
    }
  }
  SetAside(const SetAside&) = delete;
  SetAside& operator=(const SetAside&) = delete;

 private:
  // The old run's files back in place, over what the new run wrote, and .replaced/ removed.
  // The log is set aside first: a checkpoint set aside without a log means the
  // old run had none, and the log in the directory is the new run's.
  void restore() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir(dir_);
    if (fs::exists(aside_ / kLogFile, ec))
      fs::rename(aside_ / kLogFile, dir / kLogFile, ec);
    else if (fs::exists(aside_ / kCheckpointFile, ec))
      fs::remove(dir / kLogFile, ec);
    if (fs::exists(aside_ / kCheckpointFile, ec)) fs::rename(aside_ / kCheckpointFile, dir / kCheckpointFile, ec);
    fs::remove_all(aside_, ec);
    active_ = false;
  }
  std::string dir_;
  std::filesystem::path aside_;
  bool active_ = false;
};

// A fresh run may not land on another run's files unless told to (and told
// to, nothing is touched until the new run has been validated: SetAside).
void check_fresh(const std::string& dir, bool overwrite) {
  if (dir.empty() || overwrite) return;
  std::vector<std::string> there;
  for (const char* name : {kCheckpointFile, kLogFile})
    if (std::filesystem::exists(std::filesystem::path(dir) / name)) there.push_back(name);
  if (there.empty()) return;
  std::string names;
  for (const auto& n : there) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument(text::msg("train.holds_another_run", dir, names, dir));
}

}  // namespace

void check_memory(const TrainConfig& c, const tasks::TaskInfo& info) {
  const double need = nn::estimate_training_bytes(c.model, c.batch, info.seq_len);
  const double have = io::available_memory_bytes();
  if (need <= have) return;
  const std::string shape = c.model.recurrent()
                                ? text::msg("train.memory_recurrent", c.model.kind, c.model.d_model)
                                : text::msg("train.memory_transformer", c.model.layers, c.model.d_model, c.model.heads);
  throw std::runtime_error(
      text::msg("train.memory", io::human_bytes(need), shape, c.batch, info.seq_len, io::human_bytes(have)));
}

std::uint64_t eval_seed(std::uint64_t seed) { return seed ^ 0x5EED0FE7A1ULL; }

EvalResult evaluate(const nn::SequenceModel& model, const tasks::Task& task, int eval_size, int batch,
                    std::uint64_t seed, const std::atomic<bool>* stop) {
  ag::NoGrad no_grad;
  const tasks::TaskInfo& info = task.info();
  EvalResult r;
  double loss_sum = 0, squared = 0;
  long scored = 0, correct = 0, seq_correct = 0;
  std::vector<std::pair<int, bool>> by_distance;
  for (const tasks::Batch& b : task.eval_batches(eval_size, batch, seed)) {
    if (stop && stop->load()) throw Interrupted{};
    const BatchScore s = score_batch(model, info, b, {});
    r.sequences += s.sequences;
    scored += s.scored;
    correct += s.correct;
    seq_correct += s.sequences_correct;
    squared += s.squared_error;
    loss_sum += s.loss.item() * (info.regression ? s.sequences : s.scored);
    by_distance.insert(by_distance.end(), s.by_distance.begin(), s.by_distance.end());
  }
  if (info.regression) {
    r.mse = squared / static_cast<double>(r.sequences);
    r.loss = *r.mse;
    return r;
  }
  r.loss = scored ? loss_sum / static_cast<double>(scored) : 0;
  r.token_acc = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0;
  if (info.sequence_metric) r.seq_acc = static_cast<double>(seq_correct) / static_cast<double>(r.sequences);
  // Buckets of distance [1, 1], [2, 3], [4, 7], ...: the far end is where recurrence struggles.
  for (int lo = 1; lo <= (1 << 20); lo *= 2) {
    DistanceBucket bucket{lo, 2 * lo - 1, 0, 0};
    long right = 0;
    for (const auto& [d, ok] : by_distance) {
      if (d >= bucket.lo && d <= bucket.hi) {
        ++bucket.count;
        right += ok;
      }
    }
    if (bucket.count) {
      bucket.accuracy = static_cast<double>(right) / static_cast<double>(bucket.count);
      r.by_distance.push_back(bucket);
    }
  }
  return r;
}

TrainResult run_training(TrainConfig config, const RunOptions& options) {
  TrainResult result;
  Run run;  // a fresh run's parts (run.h), or those of the run resumed
  std::unique_ptr<nn::SequenceModel>& model = run.model;
  std::unique_ptr<nn::Optimizer>& optimizer = run.optimizer;
  std::shared_ptr<tasks::Task>& task = run.task;
  std::string out_dir = options.out_dir.empty() ? options.resume_dir : options.out_dir;
  const RunLock lock(out_dir, out_dir != options.resume_dir);
  SetAside replaced(out_dir);
  if (!out_dir.empty() && replaced.restore_interrupted() && options.observer.on_message)
    options.observer.on_message(text::msg("train.overwrite_restored", out_dir));
  if (options.resume_dir.empty() || out_dir != options.resume_dir) check_fresh(out_dir, options.overwrite);
  if (!options.resume_dir.empty()) {
    Checkpoint ck = load_checkpoint(options.resume_dir, options.text, options.observer.on_message, TextRule::same_text);
    config = ck.config;
    if (options.steps) config.steps = *options.steps;
    if (options.checkpoint_every) config.checkpoint_every = *options.checkpoint_every;
    if (options.eval_size) config.eval_size = *options.eval_size;
    config.schedule.total = config.steps;
    if (config.steps < ck.step) {
      throw std::invalid_argument(text::msg("train.resume_past", options.resume_dir, ck.step, config.steps));
    }
    model = std::move(ck.model);
    task = std::move(ck.task);
    optimizer = std::make_unique<nn::Optimizer>(model->named_parameters(), config.optim);
    optimizer->load_state(ck.optimizer_state, ck.optimizer_steps);
    result.start_step = ck.step;
  } else {
    // A text is remembered by its absolute path and its fingerprint, so that
    // the run can be evaluated from anywhere, and an edited text is noticed.
    if (!config.task.text_path.empty())
      config.task.text_path = std::filesystem::absolute(config.task.text_path).string();
    run = plan_run(config, options.task);
    config = run.config;
    // Without the causal mask, position t of such a task sees the input at
    // t+1, which is its own target: the model would learn to copy the answer.
    if (config.model.kind == "transformer" && !config.model.causal && task->info().teacher_forced)
      throw std::invalid_argument(text::msg("train.no_causal", task->info().name));
  }
  if (!options.text.empty()) config.task.text_path = std::filesystem::absolute(options.text).string();
  const tasks::TaskInfo& info = task->info();
  config.task.text_fingerprint = info.text_fingerprint;
  config.task.vocab_fingerprint = info.vocab_fingerprint;
  // A signal while the checkpoint or the text was read: stop before anything is written.
  if (options.stop && options.stop->load()) {
    result.config = config;
    result.interrupted = true;
    result.stage = TrainResult::Stage::loading;
    result.steps_done = result.start_step;
    result.task = std::move(task);
    return result;
  }
  check_memory(config, info);
  if (!model) {
    run.config = config;
    build_model(run);
  }
  result.config = config;
  result.params = model->num_parameters();
  // Everything is checked: now, and not before, the run --overwrite replaces is set aside.
  if (options.overwrite && options.resume_dir.empty() && !out_dir.empty()) replaced.set_aside();
  CsvLog log(out_dir, result.start_step);  // the directory is made by the lock
  const std::vector<ag::Tensor> params = model->parameters();

  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  result.steps_done = result.start_step;
  auto maybe_inspect = [&](long step) {
    if (options.inspect && options.inspect_every > 0 && (step % options.inspect_every == 0 || step == config.steps)) {
      options.inspect(step, *model);
    }
  };
  maybe_inspect(result.start_step);
  // What a diverged run leaves: only what is really there.
  const auto what_is_kept = [&]() -> std::string {
    if (out_dir.empty()) return "";
    if (replaced.active()) return text::msg("train.kept_restored");
    if (std::filesystem::exists(std::filesystem::path(out_dir) / kCheckpointFile))
      return text::msg("train.kept_last", out_dir);
    return text::msg("train.kept_nothing");
  };
  // An update can overflow the weights (a huge --lr). The next step's loss
  // shows it, so they are checked only where nothing comes after: at a step
  // whose weights are saved, and at the last.
  const auto check_weights = [&](long step) {
    const std::string where = first_non_finite(*model);
    if (where.empty()) return;
    log.flush();
    throw std::runtime_error(text::msg("train.diverged_weights", step, where, what_is_kept()));
  };
  for (long step = result.start_step + 1; step <= config.steps; ++step) {
    ag::Rng batch_rng = step_rng(config.seed, step, 0);
    ag::Rng dropout_rng = step_rng(config.seed, step, 1);
    const tasks::Batch batch = task->sample(config.batch, batch_rng);
    model->zero_grad();
    BatchScore s = score_batch(*model, info, batch, {.training = true, .rng = &dropout_rng, .capture = {}});
    s.loss.backward();
    const double grad_norm = nn::clip_grad_norm(params, config.clip);
    const double loss = s.loss.item();
    if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
      const std::string where = first_non_finite(*model);
      log.flush();
      throw std::runtime_error(
          text::msg("train.diverged", step, text::msg(std::isfinite(loss) ? "train.the_gradient" : "train.the_loss"),
                    where.empty() ? "" : text::msg("train.diverged_where", where), what_is_kept()));
    }
    const double lr = config.schedule.lr(config.optim.lr, step);
    optimizer->step(lr);
    if (step == config.steps) check_weights(step);  // before the step is reported: it is not a good one
    StepLog row{step, loss, std::nullopt, grad_norm, lr, seconds()};
    if (!info.regression) row.accuracy = s.scored ? static_cast<double>(s.correct) / static_cast<double>(s.scored) : 0;
    result.log.push_back(row);
    log.add(row);
    result.steps_done = step;
    if (options.observer.on_step) options.observer.on_step(row, config.steps);
    maybe_inspect(step);
    const bool stopping = options.stop && options.stop->load();
    if (!out_dir.empty() && ((config.checkpoint_every > 0 && step % config.checkpoint_every == 0) || stopping)) {
      log.flush();
      check_weights(step);
      save_checkpoint(out_dir, config, *model, *optimizer, step);
      replaced.commit();
    }
    if (stopping) {
      result.interrupted = true;
      break;
    }
  }
  const long taken = result.steps_done - result.start_step;
  result.seconds = seconds();
  result.ms_per_step = taken > 0 ? 1000 * result.seconds / static_cast<double>(taken) : 0;
  log.flush();
  if (!out_dir.empty() && !result.interrupted) {
    save_checkpoint(out_dir, config, *model, *optimizer, result.steps_done);
    replaced.commit();
  }
  if (!result.interrupted) {
    try {
      result.eval = evaluate(*model, *task, config.eval_size, config.batch, eval_seed(config.seed), options.stop);
    } catch (const Interrupted&) {  // the run is done and saved; only its score is missing
      result.interrupted = true;
      result.stage = TrainResult::Stage::evaluating;
    }
  }
  result.model = std::move(model);
  result.task = std::move(task);
  // The engine's buffer pool holds this run's step-sized buffers; a lab or
  // `compare` trains the next model at other sizes, so give them back.
  ag::release_buffers();
  return result;
}

}  // namespace seqgrad::train
