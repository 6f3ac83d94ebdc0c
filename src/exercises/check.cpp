#include "src/exercises/check.h"

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "autograd/ops.h"
#include "src/exercises/compare.h"
#include "src/exercises/exercise.h"

namespace seqgrad::exercises {

namespace {

// Where the events go: the file named by --record (seqgrad gives one), else standard output.
std::FILE* g_record = stdout;
// --expected (the reference solution's run alone): the expected values, the hints and the known mistakes are
// recorded too. The student's run records what its code gave, never what was expected: nothing in it to copy.
bool g_with_expected = false;
int g_unrecorded = 0;  // the Unrecorded guards alive: while any is, emit() writes nothing

void emit(const nlohmann::json& event) {
  if (g_unrecorded > 0) return;
  // One line each, flushed at once: if the student's code crashes in the next
  // check, seqgrad still reads every line before it.
  std::fputs((event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), g_record);
  std::fflush(g_record);
}

// Numbers as JSON, with NaN (its sign kept: the poison's is positive) and the infinities as strings.
nlohmann::json numbers(const std::vector<Scalar>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (Scalar v : values) {
    const double d = static_cast<double>(v);
    if (std::isfinite(d))
      out.push_back(d);
    else
      out.push_back(std::isnan(d) ? (std::signbit(d) ? "-nan" : "nan") : (d > 0 ? "inf" : "-inf"));
  }
  return out;
}

// The exercises are built in float64 (exercise.h): their values are compared as they are, without a copy.
static_assert(std::is_same_v<Scalar, double>, "the exercises' engine is float64");

}  // namespace

Checker::Checker(int argc, char** argv, std::string exercise, int cpu_seconds) : exercise_(std::move(exercise)) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--lang") lang_ = text::parse_lang(argv[i + 1]).value_or(text::Lang::en);
    if (std::string_view(argv[i]) == "--record")
      if (std::FILE* f = std::fopen(argv[i + 1], "w")) g_record = f;
  }
  for (int i = 1; i < argc; ++i) {
    g_with_expected = g_with_expected || std::string_view(argv[i]) == "--expected";
    quick_ = quick_ || std::string_view(argv[i]) == "--quick";
  }
  // A safety net under seqgrad's own time limit: a student's endless loop
  // ends here even if nothing is left to stop it.
  const rlimit cpu{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds) + 1};
  setrlimit(RLIMIT_CPU, &cpu);
  // Every gradient buffer grad_into hands out unfilled is NaN, not the zeros a
  // fresh process happens to give: a backward that adds (+=) into one it was
  // to write (=) fails here, as it would in a longer run.
  ag::poison_buffers(true);
}

bool Checker::reference_run() const { return g_with_expected; }

bool Checker::choice(const std::string& name, bool (*theirs)()) {
  const bool value = theirs();
  emit({{"event", "choice"}, {"name", name}, {"value", value}});
  return value;
}

std::string Checker::tr(std::string_view id) const {
  return std::string(text::tr(exercise_ + "." + std::string(id), lang_));
}

void Checker::run(std::string_view id, const std::function<void()>& body) {
  if (failed_) return;
  const std::string check(id);
  running_ = check;
  emit({{"event", "start"}, {"check", check}, {"title", tr("check." + check)}});
  struct Failure {
    std::string status, detail, hint, piece;
  };
  std::optional<Failure> failure;
  try {
    body();
  } catch (const CheckFailure& f) {
    failure = Failure{f.piece.empty() ? "fail" : "piece", f.detail, f.hint, f.piece};
  } catch (const exercise::NotImplemented&) {
    failure = Failure{"todo", shared("check.not_implemented"), "", ""};
  } catch (const std::exception& e) {
    failure = Failure{"error", shared("check.threw", e.what()), shared("check.threw_hint"), ""};
  }
  // A changed input is named before what it led to: the values the code gave after it are of other inputs.
  if (const std::string name = changed_input(); !name.empty())
    failure = Failure{"changed", shared("check.changed_input", name), shared("check.changed_input_hint"), ""};
  if (!failure) {
    emit({{"event", "pass"}, {"check", check}});
    return;
  }
  failed_ = true;
  nlohmann::json event{{"event", "fail"},
                       {"check", check},
                       {"status", failure->status},
                       {"detail", failure->detail},
                       {"hint", failure->hint}};
  if (!failure->piece.empty()) event["piece"] = failure->piece;
  emit(event);
}

Unrecorded::Unrecorded() { ++g_unrecorded; }
Unrecorded::~Unrecorded() { --g_unrecorded; }

void Checker::note(const std::string& line) const { emit({{"event", "note"}, {"check", running_}, {"text", line}}); }

void Checker::watch(std::string name, const Tensor& input) {
  watched_.push_back({std::move(name), input, input.data()});
}

void Checker::watch(const std::vector<std::string>& names, const std::vector<Tensor>& inputs) {
  for (std::size_t i = 0; i < names.size() && i < inputs.size(); ++i) watch(names[i], inputs[i]);
}

std::string Checker::changed_input() {
  std::string changed;
  for (const Watched& w : watched_) {
    const std::vector<Scalar>& now = w.input.data();
    // Bit for bit: a NaN written over a value is a change too.
    const bool same =
        now.size() == w.before.size() && std::memcmp(now.data(), w.before.data(), now.size() * sizeof(Scalar)) == 0;
    if (!same && changed.empty()) changed = w.name;
  }
  watched_.clear();
  return changed;
}

int Checker::finish() const {
  emit({{"event", "done"}});
  return failed_ ? 1 : 0;
}

Tensor random_tensor(const Shape& shape, ag::Rng& rng, Scalar scale) {
  std::vector<Scalar> values(ag::numel(shape));
  for (Scalar& v : values) v = static_cast<Scalar>(rng.uniform(-scale, scale));
  return Tensor(shape, std::move(values), true);
}

Tensor copy_leaf(const Tensor& x) { return Tensor(x.shape(), x.data(), true); }

std::vector<Tensor> copy_leaves(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(copy_leaf(x));
  return out;
}

void expect_shape(const Checker& c, std::string_view what, const Shape& expected, const Shape& got) {
  emit({{"event", "shape"}, {"what", what}, {"expected", expected}, {"got", got}});
  if (auto d = compare_shapes(c.lang(), what, expected, got)) throw CheckFailure{d->detail, d->hint};
}

bool all_close(const std::vector<Scalar>& a, const std::vector<Scalar>& b, double tol) {
  return all_close_to(a, b, tol);
}

void expect_close(const Checker& c, std::string_view what, const Shape& shape, const std::vector<Scalar>& expected,
                  const std::vector<Scalar>& got, double tol, const std::string& hint,
                  const std::vector<Mistake>& mistakes) {
  // Recorded first: seqgrad compares what the student's run got with what the reference solution's run expected.
  nlohmann::json known = nlohmann::json::array();
  std::vector<KnownMistake> as_known;
  for (const Mistake& m : mistakes) {
    if (g_with_expected) known.push_back({{"values", numbers(m.values)}, {"hint", m.hint}});
    as_known.push_back({m.values, m.hint});
  }
  nlohmann::json event{{"event", "values"}, {"what", what}, {"shape", shape}, {"got", numbers(got)}};
  if (g_with_expected) {
    event["expected"] = numbers(expected);
    event["tol"] = tol;
    event["hint"] = hint;
    event["mistakes"] = known;
  }
  emit(event);
  if (auto d = compare_values(c.lang(), what, shape, expected, got, tol, hint, as_known))
    throw CheckFailure{d->detail, d->hint};
}

void expect_one_op(const Checker& c, const Tensor& out, const std::vector<Tensor>& inputs, std::string_view engine_op) {
  // An op wrapped in the engine's reshapes (its input viewed as rows, its output given back its shape) is still one
  // op of the student's: look through them, on both sides.
  auto through_reshapes = [](const ag::Node* n) {
    while (std::string_view(n->op) == "reshape" && n->parents.size() == 1) n = n->parents.front().get();
    return n;
  };
  const ag::Node& n = *through_reshapes(out.node());
  // The student's backward is a lambda (or function) of their file, in namespace
  // exercise, and its type's name says so; the engine's are in namespace ag.
  const bool theirs =
      n.backward && std::string_view(n.backward.target_type().name()).find("exercise") != std::string_view::npos;
  if (n.backward && !theirs) {
    if (n.op == engine_op) throw CheckFailure{c.shared("check.engine_op_detail", n.op), c.shared("check.one_op_hint")};
    throw CheckFailure{c.shared("check.one_op_detail", n.op), c.shared("check.one_op_hint")};
  }
  bool direct = n.requires_grad && static_cast<bool>(n.backward);
  for (const Tensor& x : inputs) {
    bool found = false;
    for (const auto& p : n.parents) found = found || through_reshapes(p.get()) == x.node();
    direct = direct && found;
  }
  if (!direct) throw CheckFailure{c.shared("check.one_op_detail", n.op), c.shared("check.one_op_hint")};
}

std::vector<std::vector<Scalar>> gradients(const TensorFn& f, const std::vector<Tensor>& inputs,
                                           const std::vector<Scalar>& weights) {
  std::vector<Tensor> leaves = copy_leaves(inputs);
  Tensor out = f(leaves);
  Tensor w(out.shape(), weights);
  // An output cut off from the inputs (values copied into a new tensor) passes them no gradient: zeros, which the
  // check then compares, and its hint says why, instead of backward's own refusal.
  if (!out.requires_grad()) {
    std::vector<std::vector<Scalar>> zeros;
    for (const Tensor& x : leaves) zeros.emplace_back(x.numel(), Scalar(0));
    return zeros;
  }
  ag::sum(out * w).backward();
  std::vector<std::vector<Scalar>> grads;
  for (Tensor& x : leaves) grads.push_back(x.grad().empty() ? std::vector<Scalar>(x.numel(), Scalar(0)) : x.grad());
  return grads;
}

std::vector<std::vector<Scalar>> numeric_gradients(const TensorFn& f, const std::vector<Tensor>& inputs,
                                                   const std::vector<Scalar>& weights) {
  ag::NoGrad no_grad;
  std::vector<Tensor> xs = copy_leaves(inputs);
  auto loss = [&] {
    const Tensor out = f(xs);
    double total = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) total += out.data()[i] * weights[i];
    return total;
  };
  std::vector<std::vector<Scalar>> grads;
  constexpr double h = 1e-6;
  for (Tensor& x : xs) {
    std::vector<Scalar> g(x.numel());
    for (std::size_t i = 0; i < x.numel(); ++i) {
      const Scalar keep = x.data()[i];
      x.data()[i] = keep + h;
      const double up = loss();
      x.data()[i] = keep - h;
      const double down = loss();
      x.data()[i] = keep;
      g[i] = static_cast<Scalar>((up - down) / (2 * h));
    }
    grads.push_back(std::move(g));
  }
  return grads;
}

std::vector<Scalar> output_weights(const TensorFn& f, const std::vector<Tensor>& inputs, ag::Rng& rng) {
  ag::NoGrad no_grad;
  const Tensor out = f(copy_leaves(inputs));
  return random_tensor(out.shape(), rng).data();
}

void expect_same_gradients(const Checker& c, const std::vector<std::string>& names, const std::vector<Tensor>& inputs,
                           const std::vector<std::vector<Scalar>>& expected,
                           const std::vector<std::vector<Scalar>>& got, double tol, const std::string& hint,
                           const std::vector<std::vector<Mistake>>& mistakes) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<Mistake> known = i < mistakes.size() ? mistakes[i] : std::vector<Mistake>{};
    std::vector<Scalar> flipped = expected[i];
    for (Scalar& g : flipped) g = -g;
    known.push_back({flipped, c.shared("check.gradient_sign", names[i])});
    expect_close(c, c.shared("check.gradient_of", names[i]), inputs[i].shape(), expected[i], got[i], tol, hint, known);
  }
}

void expect_reusable(const Checker& c, const TensorFn& student, const TensorFn& engine,
                     const std::vector<std::string>& names, const std::vector<Tensor>& inputs, ag::Rng& rng) {
  auto twice = [](const TensorFn& f) -> TensorFn {
    return [f](const std::vector<Tensor>& in) { return ag::concat({f(in), f(in)}, 0); };
  };
  auto chained = [](const TensorFn& f) -> TensorFn {
    return [f](const std::vector<Tensor>& in) {
      const Tensor first = f(in);
      std::vector<Tensor> again = in;
      again[0] = first * Scalar(0.5) + in[0] * Scalar(0.25);  // another input, made from the first output
      return ag::concat({first, f(again)}, 0);
    };
  };
  const auto compare = [&](const TensorFn& theirs, const TensorFn& ours, const char* hint) {
    const std::vector<Scalar> w = output_weights(ours, inputs, rng);
    expect_same_gradients(c, names, inputs, gradients(ours, inputs, w), gradients(theirs, inputs, w), 1e-9,
                          c.shared(hint));
  };
  compare(twice(student), twice(engine), "check.assigned_hint");
  compare(chained(student), chained(engine), "check.static_hint");
}

}  // namespace seqgrad::exercises
