// Korean everywhere a Korean student looks: every command the CLI reference
// (docs/cli.md) shows, each command's --help, and every refusal of the
// bad-input table, run with LANG=ko_KR.UTF-8, print no English sentence (no run
// of three English words: english_runs.h says what is left out).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "seqgrad_catch.hpp"

#include "bad_input_cases.h"
#include "english_runs.h"

namespace {

test::CommandResult run_korean(const std::string& args, const std::string& input = "") {
  return test::run_shell(std::string("LC_ALL= LC_MESSAGES= LANG=ko_KR.UTF-8 '") + SEQGRAD_BINARY + "' " + args, input);
}

std::string joined(const std::vector<std::string>& runs) {
  std::string out;
  for (const auto& r : runs) out += "\n    " + r;
  return out;
}

}  // namespace

TEST_CASE("korean: the English-run finder finds sentences and leaves names, options and paths", "[cli][korean]") {
  using test::english_runs;
  CHECK(english_runs("the figures below are explained in English").size() == 1);
  CHECK(english_runs("훈련: step 3 of the run, loss 2.3").size() == 1);  // "of the run"
  CHECK(english_runs("RNN 100.0%, Transformer 100.0%: 여러분의 RNN").empty());
  CHECK(english_runs("--model rnn --task copy --steps 300 --out runs/tf 스텝 300").empty());
  CHECK(english_runs("runs/tf/checkpoint.safetensors 파일이 없습니다").empty());
  CHECK(english_runs("시작: seqgrad exercise start NAME, 확인: seqgrad exercise check NAME").empty());
  CHECK(english_runs("--input: 'the cat sat' 안에 모르는 토큰이 있습니다").empty());
  CHECK(english_runs("W_h uniform (rho 0.50, sigma 0.61): ||dh_T/dh_(T-k)||").empty());
  CHECK(english_runs("two words 그리고 two more").empty());
  CHECK(english_runs("a line\nof three\nwords apart").empty());
  CHECK(english_runs("held-out token accuracy").size() == 1);
  CHECK(english_runs("seqgrad: --lr: must be a finite number").size() == 1);
}

TEST_CASE("korean: every refusal of the bad-input table, in Korean, has no English sentence", "[cli][korean]") {
  int english = 0;
  for (const test::bad_input::Case& c : test::bad_input::cases()) {
    const auto r = run_korean(c.args);
    const auto runs = test::english_runs(r.err + r.out);
    INFO("seqgrad " << c.args << "\n  stderr: " << r.err << "  English:" << joined(runs));
    CHECK(runs.empty());
    CHECK(r.exit_code == c.code);  // the same refusal, in Korean
    english += !runs.empty();
  }
  CHECK(english == 0);
}

TEST_CASE("korean: every command of the CLI reference and its --help, in Korean, has no English sentence",
          "[cli][korean]") {
  const std::string d = test::bad_input::kDir;
  (void)test::bad_input::cases();  // its fixtures: runs/tf, runs/rnn, an export
  const std::string out = test::temp_path("korean");
  std::filesystem::create_directories(out);
  struct Run {
    std::string args, input = "";
  };
  const std::vector<Run> runs{
      {""},  // the commands, a line each (and the refusal)
      {"--help"},
      {"gradcheck"},
      {"graph --model attention --steps 3"},
      {"train --model transformer --task copy --len 6 --d-model 16 --heads 2 --steps 20 --batch 8 --eval-size 8 "
       "--out " +
       out + "/copy"},
      {"train --model rnn --task recall --len 6 --d-model 16 --steps 20 --batch 8 --eval-size 8 --out " + out +
       "/recall"},
      {"train --resume " + out + "/recall --steps 30"},
      {"eval " + out + "/copy"},
      {"sample " + out + "/copy --count 2"},
      {"make-data " + out + "/data"},
      {"export " + out + "/copy --to pytorch --out " + out + "/pt"},
      {"import " + out + "/pt --out " + out + "/back"},
      {"grads --steps 0 --len 16"},
      {"paths --lens 8,16"},
      {"attention " + out + "/copy"},
      {"compare --models rnn,transformer --steps 20 --len 6 --out " + out + "/report"},
      {"bench --workload rnn --steps 2"},
      {"bench --reference " + d + "/reference.sh --python /bin/sh --workload rnn --steps 2"},
      {"lab --list"},
      {"lab sqrt-dk"},
      {"lab attention-by-hand --vectors \"1,0 0.9,0.1 0,1 -1,0\" --query 3"},
      {"lab attention-by-hand --answer \"0.41,0.38,0.20 a,b\""},
      {"lab quadratic-cost --predict", "100\n"},
      {"lab quadratic-cost --reveal"},
      {"lab clipping --seed 7 --steps 20"},
      {"exercise list"},
      {"exercise start attention --dir " + out + "/ex"},
      {"exercise check attention --dir " + out + "/ex"},
      {"exercise check-all --dir " + out + "/ex"},
  };
  std::vector<std::string> commands;
  for (const char* c :
       {"gradcheck", "graph", "train", "eval", "sample", "make-data", "export", "import", "grads", "paths", "attention",
        "compare", "bench", "lab", "exercise", "exercise start", "exercise check", "exercise check-all"})
    commands.push_back(c);
  int english = 0;
  const auto look = [&](const std::string& args, const std::string& input) {
    const auto r = run_korean(args, input);
    const auto found = test::english_runs(r.out + "\n" + r.err);
    INFO("seqgrad " << args << " (exit " << r.exit_code << ")\n  English:" << joined(found));
    CHECK(found.empty());
    CHECK(r.exit_code <= 3);
    english += !found.empty();
  };
  for (const Run& r : runs) look(r.args, r.input);
  for (const std::string& c : commands) look(c + " --help", "");
  // The report compare wrote, as a browser shows it: its text, without the markup.
  std::ifstream in(out + "/report/report.html");
  std::stringstream html;
  html << in.rdbuf();
  std::string visible;
  bool tag = false;
  for (char c : html.str()) {
    if (c == '<') tag = true;
    if (!tag) visible += c;
    if (c == '>') {
      tag = false;
      visible += ' ';
    }
  }
  REQUIRE(!visible.empty());
  CHECK(html.str().find("<html lang=\"ko\"") != std::string::npos);
  const auto found = test::english_runs(visible);
  INFO("report.html, English:" << joined(found));
  CHECK(found.empty());
  CHECK(english == 0);
}
