// The training loop end to end, at sizes that take a second or two.
#include <filesystem>
#include <fstream>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "autograd/backend.h"
#include "src/runtime/runtime.h"
#include "src/train/checkpoint.h"
#include "src/train/loss.h"
#include "src/train/trainer.h"

using namespace seqgrad;

namespace {
train::TrainConfig tiny(const std::string& model, const std::string& task, int len, int steps) {
  train::TrainConfig c;
  c.model.kind = model;
  c.model.d_model = 16;
  c.model.layers = model == "transformer" ? 2 : 1;
  c.model.heads = 2;
  c.task = {task, len, "", ""};
  c.steps = steps;
  c.batch = 16;
  c.eval_size = 128;
  c.schedule = {model == "transformer" ? "warmup-rsqrt" : "constant", 20, 0};
  return c;
}
std::string fresh_dir(const std::string& name) {
  const std::string dir = test::temp_path("test-") + name;
  std::filesystem::remove_all(dir);
  return dir;
}
std::vector<double> losses(const train::TrainResult& r) {
  std::vector<double> out;
  for (const auto& s : r.log) out.push_back(s.loss);
  return out;
}
}  // namespace

TEST_CASE("a Transformer learns to copy 4 symbols", "[training]") {
  train::TrainConfig c = tiny("transformer", "copy", 4, 300);
  c.model.d_model = 32;
  c.optim.lr = 3e-3;
  const train::TrainResult r = train::run_training(c, {});
  INFO("loss " << r.eval.loss);
  CHECK(*r.eval.token_acc > 0.95);
  CHECK(r.log.front().loss > 2.0);  // starts near ln 11 = 2.4
}

TEST_CASE("RNN, LSTM and GRU learn recall over a distance of 3", "[training]") {
  for (const char* model : {"rnn", "lstm", "gru"}) {
    train::TrainConfig c = tiny(model, "recall", 3, 300);
    c.optim.lr = 1e-2;
    const train::TrainResult r = train::run_training(c, {});
    INFO(model << ": accuracy " << *r.eval.token_acc);
    CHECK(*r.eval.token_acc > 0.9);
  }
}

TEST_CASE("adding at length 10: the Transformer beats the 0.167 baseline", "[training]") {
  train::TrainConfig c = tiny("transformer", "adding", 10, 300);
  c.optim.lr = 3e-3;
  c.model.causal = false;
  const train::TrainResult r = train::run_training(c, {});
  INFO("mse " << *r.eval.mse);
  CHECK(*r.eval.mse < 0.05);
  CHECK_FALSE(r.eval.token_acc);
}

TEST_CASE("without the causal mask, a task whose next input is the target is refused", "[training]") {
  for (const char* task : {"copy", "reverse", "sort", "lm", "words"}) {
    train::TrainConfig c = tiny("transformer", task, 5, 1);
    c.model.causal = false;
    INFO(task);
    CHECK_THROWS_WITH(train::run_training(c, {}), Catch::Contains("would let each position read its own answer"));
  }
  for (const char* task : {"recall", "assoc", "lookback", "modsum", "copy-memory"}) {
    train::TrainConfig c = tiny("transformer", task, 5, 1);
    c.model.causal = false;
    INFO(task);
    CHECK_NOTHROW(train::run_training(c, {}));
  }
}

TEST_CASE("the same seed gives bitwise the same loss curve, another seed another", "[training]") {
  const train::TrainResult a = train::run_training(tiny("lstm", "copy", 3, 15), {});
  const train::TrainResult b = train::run_training(tiny("lstm", "copy", 3, 15), {});
  CHECK(losses(a) == losses(b));
  train::TrainConfig other = tiny("lstm", "copy", 3, 15);
  other.seed = 1;
  CHECK(losses(train::run_training(other, {})) != losses(a));
}

TEST_CASE("a checkpoint round trip gives identical outputs", "[training][checkpoint]") {
  const std::string dir = fresh_dir("roundtrip");
  train::RunOptions o;
  o.out_dir = dir;
  const train::TrainResult r = train::run_training(tiny("transformer", "reverse", 4, 10), o);
  train::Checkpoint ck = train::load_checkpoint(dir);
  CHECK(ck.step == 10);
  CHECK(ck.config.model.kind == "transformer");
  const auto task = tasks::make_task(ck.config.task);
  const train::EvalResult again =
      train::evaluate(*ck.model, *task, ck.config.eval_size, ck.config.batch, train::eval_seed(ck.config.seed));
  CHECK(again.loss == r.eval.loss);
  CHECK(*again.token_acc == *r.eval.token_acc);
  // the log has a header and one row per step
  std::ifstream log(dir + "/log.csv");
  std::string header;
  std::getline(log, header);
  CHECK(header == "step,loss,accuracy,grad_norm,lr,elapsed_s");
  int rows = 0;
  for (std::string line; std::getline(log, line);) ++rows;
  CHECK(rows == 10);
}

TEST_CASE("an assoc run keeps its keys in its checkpoint, and a run without them writes none",
          "[training][checkpoint]") {
  const std::string dir = fresh_dir("assoc-keys");
  train::RunOptions o;
  o.out_dir = dir;
  train::TrainConfig c = tiny("transformer", "assoc", 5, 2);
  c.task.keys = 12;
  const train::TrainResult r = train::run_training(c, o);
  CHECK(r.task->info().vocab == 25);
  const train::Checkpoint ck = train::load_checkpoint(dir);
  CHECK(ck.config.task.keys == 12);
  CHECK(ck.task->info().keys == 12);
  CHECK(ck.config.model.vocab == 25);
  // the default, 16, is written out too: what the run was trained on, whatever the default becomes
  train::TrainConfig d = tiny("lstm", "assoc", 5, 1);
  train::complete_from_task(d, tasks::make_task(d.task)->info());
  CHECK(nlohmann::json(d)["task"]["keys"] == 16);
  train::TrainConfig other = tiny("lstm", "recall", 5, 1);
  train::complete_from_task(other, tasks::make_task(other.task)->info());
  CHECK_FALSE(nlohmann::json(other)["task"].contains("keys"));
}

TEST_CASE("a resumed run matches an uninterrupted one", "[training][checkpoint]") {
  for (const char* model : {"gru", "transformer"}) {
    const train::TrainResult whole = train::run_training(tiny(model, "sort", 4, 24), {});
    const std::string dir = fresh_dir(std::string("resume-") + model);
    train::RunOptions first;
    first.out_dir = dir;
    train::run_training(tiny(model, "sort", 4, 10), first);  // stops at step 10 of what will be 24
    train::RunOptions second;
    second.resume_dir = dir;
    second.steps = 24;
    const train::TrainResult resumed = train::run_training({}, second);
    INFO(model);
    CHECK(resumed.start_step == 10);
    const std::vector<double> all = losses(whole);
    const std::vector<double> tail(all.begin() + 10, all.end());
    CHECK(losses(resumed) == tail);
    CHECK(resumed.eval.loss == whole.eval.loss);
  }
}

TEST_CASE("a stop request finishes the step, saves, and says so", "[training][checkpoint]") {
  const std::string dir = fresh_dir("stop");
  std::atomic<bool> stop{false};
  train::RunOptions o;
  o.out_dir = dir;
  o.stop = &stop;
  o.observer.on_step = [&](const train::StepLog& s, long) {
    if (s.step == 7) stop = true;
  };
  const train::TrainResult r = train::run_training(tiny("rnn", "copy", 3, 50), o);
  CHECK(r.interrupted);
  CHECK(r.steps_done == 7);
  CHECK(train::load_checkpoint(dir).step == 7);
}

TEST_CASE("a diverging run stops at the step where it went non-finite", "[training][errors]") {
  train::TrainConfig c = tiny("rnn", "copy", 3, 50);
  c.optim.kind = nn::choices::Optimizer::sgd;
  c.optim.lr = 1e38;  // the first update leaves weights near 1e37, whose products overflow float32
  c.clip = 0;
  CHECK_THROWS_WITH(train::run_training(c, {}),
                    Catch::StartsWith("training diverged at step") && Catch::Contains("try a lower --lr"));
}

TEST_CASE("loading refuses a missing or foreign run directory", "[checkpoint][errors]") {
  CHECK_THROWS_WITH(train::load_checkpoint("/nonexistent/run"), "no run directory at /nonexistent/run");
  const std::string dir = fresh_dir("empty");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(train::load_checkpoint(dir), dir + " holds no checkpoint (checkpoint.safetensors is missing)");
}

#ifdef SEQGRAD_FAST  // threads and the fast kernels: the fast build only
TEST_CASE("two threads give bitwise the same loss curve as one", "[training][threads]") {
  for (const char* model : {"transformer", "lstm", "gru"}) {
    INFO(model);
    train::TrainConfig c = tiny(model, "copy", 8, 6);
    c.model.d_model = 64;  // large enough for the kernels to split their work
    c.batch = 32;
    const train::TrainResult one = train::run_training(c, {});
    seqgrad::runtime::set_threads(2);
    const train::TrainResult two = train::run_training(c, {});
    seqgrad::runtime::set_threads(1);
    CHECK(losses(one) == losses(two));
    CHECK(one.eval.loss == two.eval.loss);
  }
}
#endif  // SEQGRAD_FAST

#ifdef SEQGRAD_FAST  // threads and the fast kernels: the fast build only
TEST_CASE("training through the reference ops gives the fast path's loss curve, to float rounding",
          "[training][reference]") {
  for (const char* model : {"transformer", "rnn", "lstm"}) {
    train::TrainConfig c = tiny(model, "copy", 4, 20);
    c.eval_size = 16;
    const train::TrainResult fast = train::run_training(c, {});
    ag::set_kernel_path(ag::KernelPath::reference);
    const train::TrainResult reference = train::run_training(c, {});
    ag::set_kernel_path(ag::KernelPath::fast);
    const std::vector<double> a = losses(fast), b = losses(reference);
    REQUIRE(a.size() == 20);
    REQUIRE(b.size() == 20);
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(model << ", step " << i + 1 << ": fast " << a[i] << ", reference " << b[i]);
      CHECK(std::abs(a[i] - b[i]) <= 1e-4 * std::abs(b[i]));
    }
  }
}
#endif  // SEQGRAD_FAST
