#include "src/text/catalogue.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace seqgrad::text {

namespace {

// Sorted by id when first used. In a message that is formatted, {} is a field
// and {{ }} a brace; the two languages have the same fields.
Entry kEntries[] = {
    // --- the command: seqgrad exercise ----------------------------------------------------
    {"exercise.list_header", "The exercises, in the order of the chapter:", "연습 문제 목록입니다(장의 순서대로):"},
    {"exercise.list_footer",
     "Start one with: seqgrad exercise start NAME, then check it with: seqgrad exercise check NAME",
     "시작: seqgrad exercise start NAME, 확인: seqgrad exercise check NAME"},
    {"exercise.unknown", "no exercise '{}'; the exercises are: {}", "'{}'[이라는/라는] 연습 문제는 없습니다. 목록: {}"},
    {"exercise.written", "wrote {}: write your code where it says 'your code here', then run: {}",
     "{} 파일을 만들었습니다. 'your code here' 자리에 코드를 작성한 뒤 실행하세요: {}"},
    {"exercise.kept", "{} is already there and has been edited: left as it is (--force writes a fresh stub over it)",
     "{} 파일은 이미 있고 수정되어 있어 그대로 두었습니다(--force를 주면 새 스텁으로 덮어씁니다)"},
    {"exercise.unchanged", "{} is already there, still the untouched stub: fill it in, then run: {}",
     "{} 파일은 이미 있고 아직 손대지 않은 스텁입니다. 채운 뒤 실행하세요: {}"},
    {"exercise.not_a_file", "{} is not a file (a folder, a pipe or a device): give the path of your .cpp file",
     "{}[은/는] 파일이 아닙니다(폴더, 파이프, 장치 가운데 하나). 작성한 .cpp 파일의 경로를 주세요"},
    {"exercise.start_not_file",
     "{} is there and is not a file (a folder?): left as it is; remove it or use another --dir",
     "{}[이/가] 이미 있는데 파일이 아닙니다(폴더?). 그대로 두었습니다. 지우거나 --dir로 다른 폴더를 주세요"},
    {"exercise.dir_empty", "--dir is empty; name the folder of your exercise files (default exercises)",
     "--dir 값이 비어 있습니다. 연습 문제 파일이 있는 폴더를 적으세요(기본값 exercises)"},
    {"exercise.no_tmpdir",
     "no temporary folder to compile in ({}: {}): set TMPDIR to a folder you can write, or unset it",
     "컴파일할 임시 폴더가 없습니다({}: {}). TMPDIR 환경 변수를 쓸 수 있는 폴더로 정하거나 지우세요"},
    {"exercise.own_main",
     "{} defines its own main(): the checks bring theirs, so remove it (or keep your tries in another file); the "
     "linker says:",
     "{}에 main()이 따로 있습니다. 확인 프로그램이 자기 main을 가져오므로 지우세요(시험 삼아 돌려 보는 코드는 다른 "
     "파일에 두세요). 링커의 메시지:"},
    {"exercise.no_file", "no file {}: write the stub first with: seqgrad exercise start {}{}",
     "{} 파일이 없습니다. 먼저 스텁을 만드세요: seqgrad exercise start {}{}"},
    {"exercise.no_toolchain",
     "cannot check exercises: {} (the build that made this seqgrad records how to compile them; rebuild with make)",
     "연습 문제를 확인할 수 없습니다: {} (이 seqgrad를 만든 빌드가 컴파일 방법을 기록합니다. make로 다시 빌드하세요)"},
    {"exercise.checking", "checking {} ({})", "{} 확인 중 ({})"},
    {"exercise.compile_error",
     "{} does not compile; the compiler says:", "{} 파일을 컴파일하지 못했습니다. 컴파일러의 메시지:"},
    {"exercise.link_error",
     "{} compiles but does not define {} in namespace exercise with the stub's exact signature (a fresh stub to "
     "compare with: seqgrad exercise start {} --dir /tmp); the linker says:",
     "{} 파일은 컴파일되지만 namespace exercise 안에 스텁과 똑같은 시그니처의 {} 함수가 없습니다(비교할 새 "
     "스텁: seqgrad exercise start {} --dir /tmp). 링커의 메시지:"},
    {"exercise.crashed", "your code crashed ({}) during the check '{}'",
     "'{1}' 확인 도중 코드가 비정상 종료했습니다({0})"},
    {"exercise.timed_out",
     "your code was stopped after {} s during the check '{}': an endless loop, or far too much work?",
     "'{1}' 확인 도중 {0}초가 지나 코드를 멈췄습니다. 무한 루프이거나 일이 너무 많은 것은 아닌가요?"},
    {"exercise.exited_early",
     "your program ended (exit code {}) during the check '{}', before the checks were done: an exit() or "
     "std::exit in your code?",
     "'{1}' 확인 도중, 확인이 다 끝나기 전에 프로그램이 끝났습니다(종료 코드 {0}). 코드에 exit()나 std::exit가 "
     "있지 않나요?"},
    {"exercise.flooded",
     "your code was stopped during the check '{1}': it printed more than {0} MiB (a print inside a loop?)",
     "'{1}' 확인 도중 코드를 멈췄습니다. 출력이 {0} MiB를 넘었습니다(반복문 안에서 출력하고 있지 않나요?)"},
    {"exercise.compile_timed_out",
     "the compiler was stopped after {} s (a template or constexpr computation that does not end?)",
     "{}초가 지나 컴파일러를 멈췄습니다(끝나지 않는 템플릿이나 constexpr 계산이 있지 않나요?)"},
    {"exercise.crash_hint",
     "an index outside a vector's size is the usual cause (the exercise build checks std::vector's [] and stops "
     "there); "
     "its message, if there is one, is below",
     "보통은 벡터 크기를 벗어난 인덱스가 원인입니다(연습 문제 빌드는 std::vector의 []를 검사해 그 자리에서 "
     "멈춥니다). 메시지가 있다면 아래에 있습니다"},
    {"exercise.stderr", "your program printed:", "프로그램이 출력한 내용:"},
    {"exercise.uses_engine",
     "{} calls {}, the engine's own version of what the exercise {} asks you to write: write it yourself, as the "
     "statement says (the checks would only check the engine)",
     "{} 파일이 엔진의 {} 함수를 호출합니다. 이 함수는 {} 연습 문제에서 직접 작성해야 하는 것을 엔진이 미리 구현해 "
     "둔 것입니다. 과제 설명대로 직접 작성하세요(그대로 두면 확인 코드는 엔진을 확인할 뿐입니다)"},
    {"exercise.pieces_needed", "{} is built on your own {}: each must be there and pass its checks first",
     "{} 문제는 여러분이 작성한 {} 문제의 파일을 가져다 씁니다. 이 파일들이 모두 있어야 하고, 각각 먼저 그 문제의 "
     "확인을 통과해야 합니다"},
    {"exercise.pieces_missing", "not started yet in {}: {}; start them with",
     "{} 폴더에 아직 시작하지 않은 문제: {}. 시작하려면 다음을 실행하세요:"},
    {"exercise.piece_failing", "{} does not pass its own checks yet ({}): run seqgrad exercise check {}",
     "{} 파일이 아직 그 문제의 확인을 통과하지 못합니다({}). seqgrad exercise check {} 명령으로 확인해 보세요"},
    {"check.not_trained_here", "not trained in this build (the sanitizers'): run it in a build of seqgrad without them",
     "이 빌드(새니타이저 빌드)에서는 학습하지 않습니다. 새니타이저 없이 빌드한 seqgrad로 실행하세요"},
    {"check.distance_row", "distance {:>2}: your RNN recalls {:5.1f}%, your Transformer {:5.1f}%",
     "거리 {:>2}: 여러분의 RNN {:5.1f}%, 여러분의 Transformer {:5.1f}%"},
    {"check.gradient_row", "position {:>2} ({:>2} back from the query): RNN {:9.2e}, Transformer {:9.2e}",
     "위치 {:>2}(쿼리에서 {:>2}칸 앞): RNN {:9.2e}, Transformer {:9.2e}"},
    {"exercise.status_pieces", "waiting for its pieces", "조각 문제를 기다리는 중"},
    {"exercise.building_support",
     "building what the exercises are linked with (the engine in float64 and the checks; once, about a minute)...",
     "연습 문제와 함께 링크할 float64 엔진과 확인 코드를 빌드하는 중입니다(처음 한 번만, 1분쯤 걸립니다)..."},
    {"exercise.records_differ",
     "{}: your program recorded something other than this check's result here (something wrote into its record)",
     "{}: 프로그램이 이 자리에 확인 결과가 아닌 것을 기록했습니다(무언가가 기록 파일에 써 넣었습니다)"},
    {"exercise.records_count",
     "the check compares {} results, and your program recorded {}: the check's code did not run to its end",
     "이 확인은 결과 {}개를 비교하는데 프로그램은 {}개를 기록했습니다. 확인 코드가 끝까지 실행되지 않았습니다"},
    {"exercise.pass_mark", "pass", "통과"},
    {"exercise.fail_mark", "FAIL", "실패"},
    {"exercise.todo_mark", "TODO", "미구현"},
    {"exercise.skipped", "(not run: an earlier check failed)", "(앞의 확인이 실패해 실행하지 않음)"},
    {"exercise.expected", "what happened", "무엇이 달랐나"},
    {"exercise.hint", "hint", "힌트"},
    {"exercise.all_passed", "all {} checks of {} pass ({:.1f} s). Compare with the engine's own: {}",
     "{1}의 확인 {0}개를 모두 통과했습니다({2:.1f}초). 엔진의 구현과 비교해 보세요: {3}"},
    {"exercise.some_failed", "{} of {} checks pass ({:.1f} s)", "확인 {1}개 중 {0}개 통과({2:.1f}초)"},
    {"exercise.progress_header", "exercise           section  status", "연습 문제          절       상태"},
    {"exercise.status_passed", "passed", "통과"},
    {"exercise.status_failed", "failed: {}", "실패: {}"},
    {"exercise.status_todo", "not implemented yet", "아직 구현 안 됨"},
    {"exercise.status_missing", "not started", "시작 안 함"},
    {"exercise.status_broken", "does not build or run", "빌드 또는 실행 실패"},
    {"exercise.status_uses_engine", "calls the engine's own version", "엔진의 구현을 그대로 호출함"},
    {"exercise.progress_total", "{} of {} exercises pass", "연습 문제 {1}개 중 {0}개 통과"},
    {"exercise.section", "in the guide: {}", "가이드의 절: {}"},
    {"exercise.no_dir",
     "there is no directory {0} (the exercises are started there with: seqgrad exercise start NAME --dir {0})",
     "{0} 폴더가 없습니다(이 폴더에서 연습 문제를 시작하려면: seqgrad exercise start NAME --dir {0})"},
    {"exercise.mkdir_failed", "cannot create the directory {}: {}", "{} 폴더를 만들 수 없습니다: {}"},
    {"exercise.interrupted", "stopped by a signal; the check's processes are killed and its files removed",
     "시그널을 받아 멈췄습니다. 확인에 쓰던 프로세스는 끝내고 파일은 지웠습니다"},
    {"exercise.help.command", "write the chapter's pieces yourself and have them checked",
     "이 장의 부품을 직접 작성하고 확인받습니다"},
    {"exercise.help.list", "list the exercises", "연습 문제 목록을 보여 줍니다"},
    {"exercise.help.dir", "where the exercise files are", "연습 문제 파일이 있는 폴더"},
    {"exercise.help.start", "write the stub DIR/NAME.cpp to fill in", "채워 넣을 스텁 DIR/NAME.cpp를 만듭니다"},
    {"exercise.help.name", "the exercise", "연습 문제 이름"},
    {"exercise.help.force", "write the stub over a file that has been edited",
     "수정한 파일이 있어도 새 스텁으로 덮어씁니다"},
    {"exercise.help.check", "compile your file, run the exercise's checks, say what is wrong",
     "파일을 컴파일하고 연습 문제의 확인을 실행해, 무엇이 틀렸는지 알려 줍니다"},
    {"exercise.help.file", "your file (default: DIR/NAME.cpp)", "확인할 파일(기본값: DIR/NAME.cpp)"},
    {"exercise.help.json", "print one JSON object, for graders", "채점용으로 JSON 객체 하나를 출력합니다"},
    {"exercise.help.timeout", "seconds the checks may run before they are stopped",
     "확인을 멈추기 전까지 기다리는 시간(초)"},
    {"exercise.help.check_all", "check every exercise in DIR: a progress table",
     "DIR의 연습 문제를 모두 확인해 진행 표를 보여 줍니다"},
    {"exercise.help.json_all", "print a JSON array, one object per exercise",
     "연습 문제마다 객체 하나씩 담은 JSON 배열을 출력합니다"},
    {"exercise.help.timeout_all", "seconds each exercise's checks may run", "연습 문제 하나의 확인에 주는 시간(초)"},

    // --- shared by the checks --------------------------------------------------------------
    {"check.not_implemented", "not implemented yet", "아직 구현되지 않았습니다"},
    {"check.threw", "your code threw: {}", "코드가 예외를 던졌습니다: {}"},
    {"check.threw_hint",
     "an engine op that throws names itself and the shapes it got: compare them with the shapes in the stub's "
     "statement",
     "엔진 연산이 던지는 예외에는 연산 이름과 받은 모양이 들어 있습니다. 스텁 설명의 모양과 비교해 보세요"},
    {"check.shape_detail", "{}: expected the shape {}, got {}", "{}: 기대한 모양 {}, 실제 모양 {}"},
    {"check.unfilled_hint",
     "NaN where the expected values are finite: your code read a value it never wrote. A buffer from grad_into or "
     "make_result holds nothing yet (in the checks every value of it is NaN): write into it with =, not +=",
     "기댓값은 유한한데 NaN이 나왔습니다. 쓰지 않은 값을 읽은 것입니다. grad_into나 make_result가 주는 버퍼에는 "
     "아직 아무 값도 없습니다(확인할 때는 모두 NaN으로 채워 둡니다). +=가 아니라 =로 쓰세요"},
    {"check.shape_hint", "work out the shape of each intermediate result on paper, with the legend B, T, C, H, D",
     "B, T, C, H, D 기호로 중간 결과의 모양을 하나씩 종이에 적어 보세요"},
    {"check.size_detail", "{}: expected {} values, got {}", "{}: 값이 {}개여야 하는데 {}개입니다"},
    {"check.value_detail", "{} at {}: expected {}, got {} (largest difference {}, tolerance {:g} relative)",
     "{}의 {} 위치: 기댓값 {}, 실제 값 {}(가장 큰 차이 {}, 상대 허용 오차 {:g})"},
    {"check.changed_input", "your code changed {}: an op must not write into its inputs",
     "코드가 입력 {}의 값을 바꿨습니다. 연산은 입력을 바꾸면 안 됩니다"},
    {"check.changed_input_hint",
     "a Tensor copied with = shares its values with the original (it is a handle): put a scaled or shifted input "
     "into a new tensor, with an engine op (q * s) or make_result, and leave the caller's as it was",
     "Tensor는 핸들이라 =로 복사해도 원본과 값을 공유합니다. 입력에 값을 곱하거나 더한 결과는 엔진 연산(q * s)이나 "
     "make_result로 만든 새 텐서에 담고, 호출한 쪽이 준 입력은 그대로 두세요"},
    {"check.recall_detail",
     "the model recalls the key on {:.1f}% of 256 held-out sequences (chance 12.5%): it must "
     "reach 90%",
     "모델이 처음 보는 시퀀스 256개 가운데 {:.1f}%에서만 키를 기억해 냈습니다(무작위로 찍으면 12.5%). 90% 이상이어야 "
     "합니다"},
    {"check.assigned_hint",
     "right alone, wrong when an input feeds your op twice: a backward adds its share to each input's gradient "
     "(it writes where ag::grad_into points), and must not replace it (x->grad = ...): another op's share may be "
     "there already",
     "한 번만 쓰면 맞지만, 입력 하나가 여러분의 연산에 두 번 들어가면 틀립니다. 역전파는 각 입력의 기울기에 자기 몫을 "
     "더해야 하며(ag::grad_into가 가리키는 곳에 써 넣으면 그렇게 됩니다), 기울기를 통째로 바꿔 넣으면(x->grad = ...) "
     "안 됩니다. 다른 연산의 몫이 이미 와 있을 수 있습니다"},
    {"check.static_hint",
     "right alone, wrong when your op is called again before the first call's backward: keep what the backward needs "
     "in the lambda's captures, one copy a call, not in static or global variables, which the second call overwrites",
     "한 번만 부르면 맞지만, 첫 호출의 역전파 전에 연산을 다시 부르면 틀립니다. 역전파에 필요한 값은 호출마다 따로 "
     "람다의 캡처에 담으세요. static이나 전역 변수에 두면 두 번째 호출이 덮어씁니다"},
    {"check.capstone_sizes", "B {}, T {}, C {}, {} heads", "B {}, T {}, C {}, 헤드 {}개"},
    {"check.piece_fails_here", "your {0}.cpp passes the checks of {0}, but not where this capstone uses it ({1}): {2}",
     "여러분의 {0}.cpp는 {0} 문제의 확인은 통과하지만, 이 마무리 문제에서 쓰는 조건({1})에서는 틀립니다. {2}"},
    {"check.piece_sizes_hint",
     "fix {0}.cpp, not this file: look in it for a size written into the code, or something kept from one call to "
     "the next (a static); then check {0} again, and this capstone",
     "이 파일이 아니라 {0}.cpp를 고치세요. 코드에 크기를 직접 적어 넣은 곳이나, 한 호출에서 다음 호출까지 남아 있는 "
     "값(static 변수 등)이 없는지 살펴보세요. 그다음 {0} 문제와 이 마무리 문제를 다시 확인하세요"},
    {"check.output", "the output", "출력"},
    {"check.gradient_of", "the gradient of {}", "{}의 기울기"},
    {"check.gradient_sign",
     "the gradient of {0} has the right size and the opposite sign everywhere: the backward subtracts where it should "
     "add (or the chain rule's last factor is negated)",
     "{0}의 기울기가 크기는 맞고 부호가 모두 반대입니다. 역전파에서 더해야 할 곳에서 빼고 있습니다(또는 연쇄 법칙의 "
     "마지막 "
     "인수의 부호가 뒤집혔습니다)"},
    {"check.weights_after_step", "the weights after step {}", "{}단계 뒤의 가중치"},
    {"check.one_op_detail",
     "the output was made by '{}', not by one op of your own whose inputs are the inputs themselves",
     "출력이 '{}' 연산으로 만들어졌습니다. 입력을 직접 받는 여러분의 연산 하나여야 합니다"},
    {"check.engine_op_detail", "the output was made by the engine's own '{}': the exercise is to write it yourself",
     "출력이 엔진의 '{}' 연산으로 만들어졌습니다. 이 연습 문제는 그것을 직접 작성하는 것입니다"},
    {"check.one_op_hint",
     "make the output with Tensor::make_result(\"name\", shape, {{&x, ...}}) and give it a backward with set_backward; "
     "chaining engine ops gets autograd's gradient, not yours",
     "출력은 Tensor::make_result(\"이름\", 모양, {{&x, ...}})로 만들고 set_backward로 역전파를 달아 주세요. 엔진 "
     "연산을 이어 붙이면 여러분의 기울기가 아니라 autograd의 기울기가 쓰입니다"},

    // --- the sections of the guide (docs/guide.md) -----------------------------------------
    {"section.1", "1. First attempt: reading in order", "1. 첫 시도: 순서대로 읽기"},
    {"section.2", "2. Wall 1: distant memory dies", "2. 벽 1: 먼 기억이 죽는다"},
    {"section.3", "3. The turn: do not summarise, look directly", "3. 발상의 전환: 요약하지 말고, 직접 바라보라"},
    {"section.4", "4. Many eyes, and order restored", "4. 여러 눈으로 보기, 그리고 순서의 회복"},
    {"section.5", "5. What attention cannot do alone", "5. 어텐션 혼자서는 못 하는 것"},
    {"section.6", "6. Everything side by side", "6. 모두 나란히"},
#include "src/text/catalogue_cli.inc"
#include "src/text/catalogue_conditions.inc"
#include "src/text/catalogue_exercises.inc"
#include "src/text/catalogue_inspect.inc"
#include "src/text/catalogue_labs.inc"
#include "src/text/catalogue_tools.inc"
#include "src/text/catalogue_train.inc"
#include "src/text/catalogue_web.inc"
};

bool by_id(const Entry& a, const Entry& b) { return a.id < b.id; }

std::span<const Entry> sorted() {
  static const bool done = [] {
    std::sort(std::begin(kEntries), std::end(kEntries), by_id);
    return true;
  }();
  (void)done;
  return kEntries;
}

}  // namespace

std::optional<Lang> parse_lang(std::string_view name) {
  if (name.starts_with("ko")) return Lang::ko;
  if (name.starts_with("en") || name == "C" || name == "POSIX") return Lang::en;
  return std::nullopt;
}

Lang lang_from_environment() {
  for (const char* var : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* value = std::getenv(var);
    if (!value || !*value) continue;
    const std::string_view locale(value);
    if (!locale.starts_with("ko")) return Lang::en;
    // Korean is written in UTF-8 only: ko_KR.EUC-KR (or any other codeset) gets English, which it can show.
    const std::size_t dot = locale.find('.');
    if (dot == std::string_view::npos) return Lang::ko;
    std::string codeset;
    for (char c : locale.substr(
             dot + 1, locale.find('@') == std::string_view::npos ? std::string_view::npos : locale.find('@') - dot - 1))
      if (c != '-') codeset += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return codeset == "utf8" ? Lang::ko : Lang::en;
  }
  return Lang::en;
}

std::size_t utf8_char_at(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  char32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 0x2) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kLeast[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

std::string one_line(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_char_at(s, i);
    if (n > 1 || (n == 1 && c >= 0x20 && c != 0x7F)) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : fmt::format("\\x{:02x}", c);
    ++i;
  }
  return out;
}

std::string_view to_string(Lang lang) { return lang == Lang::ko ? "ko" : "en"; }

namespace {
std::optional<Lang>& chosen() {
  static std::optional<Lang> lang;
  return lang;
}
}  // namespace

Lang lang() {
  if (!chosen()) chosen() = lang_from_environment();
  return *chosen();
}
void set_lang(Lang lang) { chosen() = lang; }

namespace {
// The code point that ends `s` (0 for none or malformed), and where it starts.
char32_t last_code_point(std::string_view s, std::size_t& start) {
  std::size_t i = s.size();
  while (i > 0 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;
  if (i == 0) return 0;
  --i;
  start = i;
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = utf8_char_at(s, i);
  if (n == 0 || i + n != s.size()) return 0;
  char32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

// How the text before a particle ends when read aloud: with a final consonant, and whether that is ㄹ.
struct Ending {
  bool consonant = false, rieul = false;
};

// A Latin word as a Korean reads it. Letters alone, a word without a vowel or with a capital after its first letter
// (rnn, lstm, SGD, FFN, MiB: read letter by letter), end as the last letter's name: 엘 엠 엔 알 in a consonant, the
// others in a vowel. A word is read as its loanword is written: -ng 트레이닝, -m 아담, -n 어텐션, -l and -le 리콜
// 테이블 (ㄹ), -me -ne 타임 코사인, -ck and -k after a vowel 블록 룩백 (but 마스크), -p and -b after one vowel 스텝 웹
// (but 루프), -out 드롭아웃; all else in a vowel: 트랜스포머 카피 로프 리버스 소트 스텝스 렐루 배치.
Ending latin_ending(std::string_view word) {
  std::string w(word);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto vowel = [](char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; };
  const bool capital_inside =
      std::any_of(word.begin() + 1, word.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
  if (w.size() == 1 || capital_inside || std::none_of(w.begin(), w.end(), vowel)) {
    const char last = w.back();  // 엘 엠 엔 알
    return {last == 'l' || last == 'm' || last == 'n' || last == 'r', last == 'l' || last == 'r'};
  }
  const char last = w.back(), before = w[w.size() - 2];
  const bool one_vowel_before = vowel(before) && (w.size() < 3 || !vowel(w[w.size() - 3]));
  if (w.ends_with("ng") || last == 'm' || last == 'n' || w.ends_with("me") || w.ends_with("ne") || w.ends_with("out"))
    return {true, false};
  if (last == 'l' || w.ends_with("le")) return {true, true};
  if (w.ends_with("ck") || (last == 'k' && vowel(before))) return {true, false};
  if ((last == 'p' || last == 'b') && one_vowel_before) return {true, false};
  return {};
}
// What a particle's reading looks through to the word before it: closing brackets, quotes, a space.
bool looked_through(char32_t cp) {
  return cp == ')' || cp == ']' || cp == '\'' || cp == '"' || cp == '`' || cp == ' ' || cp == 0x2019 || cp == 0x201D;
}
Ending ending_of(std::string_view before) {
  std::size_t start = 0;
  for (char32_t cp; (cp = last_code_point(before, start)) != 0; before = before.substr(0, start)) {
    if (looked_through(cp)) continue;
    if (cp >= 0xAC00 && cp <= 0xD7A3) {
      const auto final = (cp - 0xAC00) % 28;
      return {final != 0, final == 8};
    }
    if (cp >= '0' && cp <= '9') {  // 영 일 이 삼 사 오 육 칠 팔 구
      constexpr bool consonant[] = {true, true, false, true, false, false, true, true, true, false};
      constexpr bool rieul[] = {false, true, false, false, false, false, false, true, true, false};
      return {consonant[cp - '0'], rieul[cp - '0']};
    }
    const char32_t lower = cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp;
    if (lower >= 'a' && lower <= 'z') {
      std::size_t from = before.size();  // the Latin word that ends here
      while (from > 0 && std::isalpha(static_cast<unsigned char>(before[from - 1]))) --from;
      return latin_ending(before.substr(from));
    }
    return {};
  }
  return {};
}

bool hangul_only(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = 0;
    const std::size_t n = utf8_char_at(s, i);
    if (n != 3) return false;
    const char32_t cp = last_code_point(s.substr(0, i + n), start);
    if (cp < 0xAC00 || cp > 0xD7A3) return false;
    i += n;
  }
  return !s.empty();
}

// Whether the text before a particle ends in a field, "{}" (through what ending_of looks through).
bool after_field(std::string_view before) {
  std::size_t start = 0;
  for (char32_t cp; (cp = last_code_point(before, start)) != 0; before = before.substr(0, start))
    if (!looked_through(cp)) return cp == '}';
  return false;
}

// Each "[A/B]" marker of s resolved; with keep_after_field, those after a field are left for the filled message.
std::string resolve_particles(std::string_view s, bool keep_after_field) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t close = s[i] == '[' ? s.find(']', i) : std::string_view::npos;
    const std::size_t slash = close != std::string_view::npos ? s.find('/', i) : std::string_view::npos;
    if (slash != std::string_view::npos && slash < close && !(keep_after_field && after_field(out))) {
      const std::string_view with = s.substr(i + 1, slash - i - 1), without = s.substr(slash + 1, close - slash - 1);
      if (hangul_only(with) && hangul_only(without)) {
        const Ending e = ending_of(out);
        out += e.consonant && !(e.rieul && with == "으로") ? with : without;
        i = close + 1;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

}  // namespace

std::string korean_particles(std::string_view s) { return resolve_particles(s, false); }

namespace detail {
std::string shield(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (const char c : field) {
    if (c == '[')
      out.append(kFieldBracket.data(), kFieldBracket.size());
    else
      out.push_back(c);
  }
  return out;
}
std::string unshield(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s.substr(i, kFieldBracket.size()) == kFieldBracket) {
      out.push_back('[');
      i += kFieldBracket.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}
}  // namespace detail

namespace {
const Entry* lookup(std::string_view id) {
  const auto all = sorted();
  const auto it = std::lower_bound(all.begin(), all.end(), Entry{id, {}, {}}, by_id);
  return it != all.end() && it->id == id ? &*it : nullptr;
}
}  // namespace

bool has(std::string_view id) { return lookup(id) != nullptr; }

std::string_view tr(std::string_view id, Lang lang) {
  const Entry* e = lookup(id);
  if (!e) throw std::logic_error("no message '" + std::string(id) + "' in the catalogue");
  if (lang == Lang::en) return e->en;
  // The Korean with every particle that follows the catalogue's own words chosen once, so that a text passed as a
  // field of another message (whose fields are shielded from the rule) carries none; those after a field stay.
  static const std::vector<std::string> resolved = [] {
    std::vector<std::string> out;
    for (const Entry& entry : sorted()) out.push_back(resolve_particles(entry.ko, true));
    return out;
  }();
  return resolved[static_cast<std::size_t>(e - sorted().data())];
}

std::span<const Entry> entries() { return sorted(); }

}  // namespace seqgrad::text
