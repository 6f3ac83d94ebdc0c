// Korean everywhere a Korean student looks: every command the CLI reference
// (docs/cli.md) shows, each command's --help, and every refusal of the
// bad-input table, run with LANG=ko_KR.UTF-8, print no English sentence (no run
// of three English words: english_runs.h says what is left out).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "seqgrad_catch.hpp"

#include "src/text/catalogue.h"

#include "bad_input_cases.h"
#include "english_runs.h"

namespace {

test::CommandResult run_korean(const std::string& args, const std::string& input = "") {
  std::string command = "LC_ALL= LC_MESSAGES= LANG=ko_KR.UTF-8 '";  // appended, not summed: GCC 12's -Warray-bounds
  command.append(SEQGRAD_BINARY).append("' ").append(args);         // misreads the sum of a literal's strings
  return test::run_shell(command, input);
}

// The names of the labs and the exercises (lab.NAME.claim, NAME.statement in the catalogue): a list of them is
// a list of names, in any language.
const std::set<std::string>& lab_and_exercise_names() {
  static const std::set<std::string> names = [] {
    std::set<std::string> n;
    for (const seqgrad::text::Entry& e : seqgrad::text::entries()) {
      const std::string id(e.id);
      if (id.starts_with("lab.") && id.ends_with(".claim")) n.insert(id.substr(4, id.size() - 10));
      if (id.ends_with(".statement") && id.find('.') == id.size() - 10) n.insert(id.substr(0, id.size() - 10));
    }
    return n;
  }();
  return names;
}

std::vector<std::string> english_in(const std::string& text) {
  return test::english_runs(text, lab_and_exercise_names());
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
  CHECK(english_runs("이 과제의 토큰: ? A B C D E F G H a b c d e f g h").empty());
  CHECK(english_runs("다음 실험에 씁니다: clipping, gates, agreement", {"clipping", "gates", "agreement"}).empty());
  CHECK(english_in("다음 실험에 씁니다: clipping, gates, gru-gradient, agreement").empty());
  CHECK(english_runs("seqgrad: --lr: must be a finite number").size() == 1);
}

TEST_CASE("korean: the particle rule leaves what the user typed as it was", "[cli][korean]") {
  // A path, an answer or a token of the user's may hold what looks like the catalogue's particle markers; only the
  // catalogue's own are chosen. (Before: "/tmp/말뭉치를x".)
  const std::string path = test::temp_path("korean-particles") + "/말뭉치[을/를]x";
  const auto r = run_korean("eval '" + path + "'");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "seqgrad: 실행 폴더가 없습니다: " + path + "\n");
}

TEST_CASE("korean: every refusal of the bad-input table, in Korean, has no English sentence", "[cli][korean]") {
  int english = 0;
  for (const test::bad_input::Case& c : test::bad_input::cases()) {
    const auto r = run_korean(c.args);
    const auto runs = english_in(r.err + r.out);
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
      {"attention " + out + "/copy --query 11"},
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
    const auto found = english_in(r.out + "\n" + r.err);
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
  const std::string page = html.str();
  for (std::size_t i = 0; i < page.size(); ++i) {
    for (const char* hidden : {"style", "script"})  // their text is not shown
      if (page.compare(i, 1 + std::strlen(hidden), std::string("<") + hidden) == 0)
        i = std::min(page.size() - 1, page.find(std::string("</") + hidden, i));
    const char c = page[i];
    if (c == '<') tag = true;
    if (!tag) visible += c;
    if (c == '>') {
      tag = false;
      visible += ' ';
    }
  }
  REQUIRE(!visible.empty());
  CHECK(html.str().find("<html lang=\"ko\"") != std::string::npos);
  const auto found = english_in(visible);
  INFO("report.html, English:" << joined(found));
  CHECK(found.empty());
  CHECK(english == 0);
}

namespace {

// The glossary's table (docs/ko/glossary.md): each row's Korean words, and the words it replaces.
struct Glossary {
  std::vector<std::string> words, replaced;
};
Glossary read_glossary() {
  std::ifstream in(std::string(SEQGRAD_SOURCE_DIR) + "/docs/ko/glossary.md");
  Glossary g;
  const auto split = [](const std::string& cell, std::vector<std::string>& into) {
    std::string word;
    for (std::size_t i = 0; i <= cell.size(); ++i) {
      if (i == cell.size() || cell[i] == ',' || cell[i] == '(' || cell[i] == ')') {
        const auto first = word.find_first_not_of(' '), last = word.find_last_not_of(' ');
        if (first != std::string::npos) into.push_back(word.substr(first, last - first + 1));
        word.clear();
      } else {
        word += cell[i];
      }
    }
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| English", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3) continue;
    split(cells[1], g.words);
    split(cells[2], g.replaced);
  }
  return g;
}

// The places in `text` where a replaced word stands (outside the glossary's own words: 체크포인트 is not 체크).
std::vector<std::string> replaced_words(std::string text, const Glossary& g) {
  // A glossary word is masked only where it holds a word it replaces (체크포인트 holds 체크): masking every glossary
  // word would hide the compounds the glossary replaces (기울기 자르기 holds 기울기).
  for (const std::string& w : g.words) {
    if (std::none_of(g.replaced.begin(), g.replaced.end(),
                     [&](const std::string& r) { return r != w && w.find(r) != std::string::npos; }))
      continue;
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = text.find(w); at != std::string::npos; at = text.find(w, from)) {
      out.append(text, from, at - from);
      out += '#';
      from = at + w.size();
    }
    out.append(text, from, std::string::npos);
    text = out;
  }
  std::vector<std::string> found;
  for (const std::string& w : g.replaced)
    if (text.find(w) != std::string::npos) found.push_back(w);
  return found;
}

}  // namespace

TEST_CASE("korean: the glossary: the catalogue's Korean and the Korean guides use none of the words it replaces",
          "[korean][glossary]") {
  const Glossary g = read_glossary();
  REQUIRE(g.words.size() >= 40);
  REQUIRE(g.replaced.size() >= 30);
  CHECK(std::find(g.replaced.begin(), g.replaced.end(), "너비") != g.replaced.end());
  CHECK(replaced_words("체크포인트를 읽습니다", g).empty());
  CHECK(replaced_words("너비 64", g) == std::vector<std::string>{"너비"});
  CHECK(!replaced_words("전역 노름으로 기울기 자르기", g).empty());  // a compound of a glossary word
  int found = 0;
  for (const seqgrad::text::Entry& e : seqgrad::text::entries()) {
    const auto words = replaced_words(std::string(e.ko), g);
    INFO(e.id << ": " << e.ko);
    for (const auto& w : words) INFO("replaced word: " << w);
    CHECK(words.empty());
    found += !words.empty();
  }
  for (const char* guide : {"docs/ko/guide.md", "docs/ko/exercises.md"}) {
    std::ifstream in(std::string(SEQGRAD_SOURCE_DIR) + "/" + guide);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      const auto words = replaced_words(line, g);
      INFO(guide << ":" << n << ": " << line);
      CHECK(words.empty());
      found += !words.empty();
    }
  }
  CHECK(found == 0);
}
