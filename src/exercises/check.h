// The checks' side of an exercise: the program `seqgrad exercise check` builds
// from the student's file and one file of src/exercises/checks/ runs its checks
// one after the other and writes one JSON line per event into the file named
// by --record (standard output without it):
//   {"event":"start","check":ID}  before a check runs (so a crash can be placed)
//   {"event":"values","what":...,"shape":[...],"expected":[...],"got":[...],"tol":...,"hint":...,"mistakes":[...]}
//   {"event":"shape","what":...,"expected":[...],"got":[...]}
//   {"event":"choice","name":NAME,"value":V}  a choice the student's code makes (a pre-LN block, say)
//   {"event":"note","check":ID,"text":...}    a line of the running check's figures, shown as it comes
//   {"event":"pass","check":ID}
//   {"event":"fail","check":ID,"status":"fail"|"todo"|"error"|"changed","detail":...,"hint":...}
// It stops at the first check that fails. seqgrad builds the same program
// from the reference solution too, and decides each check itself: the values
// the student's run got against those the reference run expected (its
// comparison, compare.h, is the program's own). The student's program never
// writes the verdict: its pass lines count only when its values are right.
// What only the program can see (expect_one_op's look at its graph, a failure
// it reports) is taken from its records: code that tampered with the checks'
// own functions could hide such a failure, but never a wrong value. A check
// that records no value (a capstone's training, whose outcome is a figure of
// the student's run alone) is that run's word: after the values and gradients
// it follows from, but not proof against such tampering.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/rng.h"
#include "autograd/tensor.h"
#include "src/text/catalogue.h"

namespace seqgrad::exercises {

using ag::Scalar;
using ag::Shape;
using ag::Tensor;

// While one lives, what the checks compare is not recorded: for comparisons the reference run does not make (a
// capstone trying its pieces after a failure), whose results would otherwise be set against the reference run's.
class Unrecorded {
 public:
  Unrecorded();
  ~Unrecorded();
  Unrecorded(const Unrecorded&) = delete;
  Unrecorded& operator=(const Unrecorded&) = delete;
};

// A check that found a difference, with what to tell the student.

struct CheckFailure {
  CheckFailure(std::string detail_, std::string hint_, std::string piece_ = "")
      : detail(std::move(detail_)), hint(std::move(hint_)), piece(std::move(piece_)) {}
  std::string detail;  // what was expected, what came, where
  std::string hint;    // the usual mistake behind it
  std::string piece;   // a capstone's: the piece (exercise) whose file is at fault, when it is not the capstone's own
};

class Checker {
 public:
  // Reads --lang (en, ko), --record FILE, --expected and --quick from the command line; `exercise` names the
  // catalogue's entries ("attention").
  // cpu_seconds: the safety net under seqgrad's own time limit (a capstone that trains needs more).
  Checker(int argc, char** argv, std::string exercise, int cpu_seconds = 60);

  // Runs check `id` (its title is the catalogue's "<exercise>.check.<id>")
  // unless one before it failed. The body throws CheckFailure when it finds a
  // difference; the student's NotImplemented and any other exception are caught here.
  void run(std::string_view id, const std::function<void()>& body);
  int finish() const;  // 0 when every check passed, 1 otherwise

  // An input the student's code gets and must leave as it was: its values now,
  // compared when the running check ends. A change fails that check, by name
  // ("your code changed q"), before any difference in the values it then gave.
  void watch(std::string name, const Tensor& input);
  void watch(const std::vector<std::string>& names, const std::vector<Tensor>& inputs);  // names[i] for inputs[i]

  text::Lang lang() const { return lang_; }
  // The reference solution's run (--expected): it records what each check expects. A check whose verdict is a
  // figure of the student's run alone (a training's outcome) need not be run again there. Read from the command
  // line, which the student's code could rewrite: never a reason to compute anything another way.
  bool reference_run() const;
  // Checked as a capstone's piece (--quick): a training's check is left out, the capstone runs its own.
  bool quick() const { return quick_; }
  // A choice the exercise leaves to the student (block_pre_ln()): `theirs()`, recorded. seqgrad gives the student's
  // to the reference run (SEQGRAD_CHOICE_PRE_LN=0|1), whose reference solution follows it.
  bool choice(const std::string& name, bool (*theirs)());
  // A line of figures of the running check (a capstone's table), shown to the student under it, and as it comes.
  void note(const std::string& line) const;
  // The exercise's own message "<exercise>.<id>" (its checks' titles, its hints).
  std::string tr(std::string_view id) const;
  // A message all the exercises share ("check.<...>"), its fields filled.
  template <class... Args>
  std::string shared(std::string_view id, Args&&... args) const {
    return text::trf(id, lang_, std::forward<Args>(args)...);
  }

 private:
  struct Watched {
    std::string name;
    Tensor input;
    std::vector<Scalar> before;
  };
  // The first watched input whose values changed ("" when none did); forgets them all.
  std::string changed_input();

  std::string exercise_;
  text::Lang lang_ = text::Lang::en;
  bool failed_ = false;
  bool quick_ = false;
  std::string running_;  // the check being run
  std::vector<Watched> watched_;
};

// Built with AddressSanitizer (seqgrad's own sanitizer build, for its tests): the trainings are left out there,
// at ten times their cost; a student's seqgrad is not built so.
constexpr bool under_sanitizers() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

// --- building inputs -------------------------------------------------------------
// Values drawn uniformly from [-scale, scale), a leaf that requires a gradient.
Tensor random_tensor(const Shape& shape, ag::Rng& rng, Scalar scale = 1);
// A fresh leaf with the same values (its own gradient).
Tensor copy_leaf(const Tensor& x);
std::vector<Tensor> copy_leaves(const std::vector<Tensor>& xs);

// --- comparing -----------------------------------------------------------------------
// A way the student's result may be wrong in a known way: the values a
// typical mistake gives, and the hint that names it.
struct Mistake {
  std::vector<Scalar> values;
  std::string hint;
};

// Throws CheckFailure when `got` has another shape than `expected`.
void expect_shape(const Checker& c, std::string_view what, const Shape& expected, const Shape& got);
// Throws CheckFailure at the first element (and its index in `shape`) further
// than tol * (1 + |expected|) from `expected`. The hint is that of the first
// mistake in `mistakes` whose values `got` matches, else `hint`.
void expect_close(const Checker& c, std::string_view what, const Shape& shape, const std::vector<Scalar>& expected,
                  const std::vector<Scalar>& got, double tol, const std::string& hint,
                  const std::vector<Mistake>& mistakes = {});
bool all_close(const std::vector<Scalar>& a, const std::vector<Scalar>& b, double tol);

// Throws CheckFailure unless `out` is one new op whose inputs are `inputs`
// themselves (with a backward to call): a custom op, not a chain of engine ops,
// and not `engine_op`, the engine's own op for the same thing.
void expect_one_op(const Checker& c, const Tensor& out, const std::vector<Tensor>& inputs, std::string_view engine_op);

// A function of some tensors, as the checks call the student's code and the engine's.
using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

// The gradient of sum(f(inputs) * weights) with respect to each input, for
// `weights` a fixed random tensor of f's output shape (so every output element counts, each differently).
std::vector<std::vector<Scalar>> gradients(const TensorFn& f, const std::vector<Tensor>& inputs,
                                           const std::vector<Scalar>& weights);
// The same by central differences (float64, step 1e-6), without autograd.
std::vector<std::vector<Scalar>> numeric_gradients(const TensorFn& f, const std::vector<Tensor>& inputs,
                                                   const std::vector<Scalar>& weights);
// Weights for the above: random, of f(inputs)'s size.
std::vector<Scalar> output_weights(const TensorFn& f, const std::vector<Tensor>& inputs, ag::Rng& rng);

// Compares the student's gradients with the engine's, input by input
// (names[i] is how the message calls input i); tol as in expect_close.
// `mistakes[i]`: the known wrong gradients of input i, each with its hint; every input's gradient with its sign
// flipped is known too.
void expect_same_gradients(const Checker& c, const std::vector<std::string>& names, const std::vector<Tensor>& inputs,
                           const std::vector<std::vector<Scalar>>& expected,
                           const std::vector<std::vector<Scalar>>& got, double tol, const std::string& hint,
                           const std::vector<std::vector<Mistake>>& mistakes = {});

// f(), whose refusal by an engine op (shapes it cannot combine, a slice out of range: ag::ShapeError, ag::ValueError)
// is told `hint`: in a check that varies the sizes, a size written into the code, not the generic hint for a throw.
template <class F>
auto sized(const Checker& c, const std::string& hint, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw CheckFailure{c.shared("check.threw", e.what()), hint};
  }
}

// The piece as a model uses it, for an op with a backward of the student's own: `student` and `engine` map inputs[0]
// (x) and the parameters inputs[1..] to an output of x's shape. Two graphs, each compared by its gradients:
//  1. the op called twice on the same inputs before any backward: every input then gets two contributions, and a
//     backward that assigns its input's gradient (x->grad = ...) instead of adding its share loses one;
//  2. the op called on x, then on an input made from its first output: the second call's backward runs first, so an
//     op that keeps its forward's values in static storage gives the first call's backward the second call's.
// names[i] is how the messages call inputs[i].
void expect_reusable(const Checker& c, const TensorFn& student, const TensorFn& engine,
                     const std::vector<std::string>& names, const std::vector<Tensor>& inputs, ag::Rng& rng);

}  // namespace seqgrad::exercises
