// Every lab ends with a "try this" line: commands a student copies as they
// stand. Each is run here, as written in the catalogue, twice in a row in one
// folder (a student tries a line again, and a second run must not trip over
// the first one's files): every command must succeed both times. A fragment
// such as "then `--pos sinusoidal`" changes the line's first command, each
// fragment on its own, as a student would (replacing the option's value or
// adding it; "without `--x`" drops it); a line that starts with fragments
// changes `seqgrad lab NAME`.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "run_command.h"
#include "src/text/catalogue.h"

namespace {

using Words = std::vector<std::string>;

// Shell-like words: spaces separate, double quotes group.
Words split_words(const std::string& s) {
  Words out;
  std::string word;
  bool quoted = false, any = false;
  for (char c : s) {
    if (c == '"') {
      quoted = !quoted, any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(word);
      word.clear(), any = false;
    } else {
      word += c, any = true;
    }
  }
  if (any) out.push_back(word);
  return out;
}

bool is_option(const std::string& w) { return w.size() > 2 && w.rfind("--", 0) == 0; }

// Where `option` is in `command` and how many values follow it; npos when absent.
std::pair<std::size_t, std::size_t> find_option(const Words& command, const std::string& option) {
  for (std::size_t i = 0; i < command.size(); ++i)
    if (command[i] == option) {
      std::size_t n = 0;
      while (i + 1 + n < command.size() && !is_option(command[i + 1 + n])) ++n;
      return {i, n};
    }
  return {std::string::npos, 0};
}

// `command` changed by a fragment: each option in it replaces that option's values, or is added.
Words apply(Words command, const Words& fragment, bool without) {
  for (std::size_t i = 0; i < fragment.size();) {
    std::size_t n = 0;
    while (i + 1 + n < fragment.size() && !is_option(fragment[i + 1 + n])) ++n;
    const auto [at, had] = find_option(command, fragment[i]);
    const Words values(fragment.begin() + static_cast<long>(i) + 1, fragment.begin() + static_cast<long>(i + 1 + n));
    if (at != std::string::npos)
      command.erase(command.begin() + static_cast<long>(at), command.begin() + static_cast<long>(at + 1 + had));
    if (!without) {
      command.push_back(fragment[i]);
      command.insert(command.end(), values.begin(), values.end());
    }
    i += 1 + n;
  }
  return command;
}

// The commands of a lab's try-this line, in order.
std::vector<Words> commands_of(const std::string& lab, const std::string& line) {
  std::vector<Words> out;
  std::optional<Words> first;  // the line's first command
  for (std::size_t open = line.find('`'); open != std::string::npos; open = line.find('`', open)) {
    const std::size_t close = line.find('`', open + 1);
    REQUIRE(close != std::string::npos);
    const Words words = split_words(line.substr(open + 1, close - open - 1));
    const bool without = line.substr(0, open).ends_with("without ");
    open = close + 1;
    REQUIRE(!words.empty());
    if (!is_option(words[0])) {
      out.push_back(words);
      if (!first) first = words;
      continue;
    }
    out.push_back(apply(first ? *first : Words{"seqgrad", "lab", lab}, words, without));
  }
  return out;
}

std::string shell_line(const Words& command) {
  std::string out;
  for (const std::string& w : command) {
    out += out.empty() ? "" : " ";
    if (w == "seqgrad") {
      out += std::string("'") + SEQGRAD_BINARY + "'";
      continue;
    }
    std::string quoted = "'";
    for (char c : w) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += quoted + "'";
  }
  return out;
}

void run_try_line(const std::string& lab) {
  const std::string line(seqgrad::text::tr("lab." + lab + ".try", seqgrad::text::Lang::en));
  const std::vector<Words> commands = commands_of(lab, line);
  REQUIRE(!commands.empty());
  const std::string dir = test::temp_path("try-" + lab);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int round = 1; round <= 2; ++round)
    for (const Words& command : commands) {
      const std::string sh = shell_line(command);
      INFO("round " << round << ": " << sh);
      const test::CommandResult r = test::run_shell("cd '" + dir + "' && " + sh);
      INFO(r.err);
      // A lab exits 1 when its claim does not hold on the trial asked for (the line may ask for that), 3 when it
      // cannot decide: verdicts, said on a line of their own. Anything else must succeed.
      const bool lab_verdict = command.size() > 1 && command[1] == "lab" &&
                               ((r.exit_code == 1 && r.out.find("the claim does NOT hold") != std::string::npos) ||
                                (r.exit_code == 3 && r.out.find("inconclusive") != std::string::npos));
      CHECK((r.exit_code == 0 || lab_verdict));
      CHECK(!r.out.empty());
    }
  std::filesystem::remove_all(dir);
}

// The labs, by name: a lab added without its test here fails the test below.
const std::vector<std::string> kLabs{"shared-weights",
                                     "two-walls",
                                     "sequential-time",
                                     "clipping",
                                     "gates",
                                     "gru-gradient",
                                     "attention-by-hand",
                                     "context-vector",
                                     "attention-learned",
                                     "no-position",
                                     "quadratic-cost",
                                     "attention-memory",
                                     "attention-share",
                                     "qk-asymmetry",
                                     "value-proj",
                                     "sqrt-dk",
                                     "sqrt-dk-training",
                                     "multi-head",
                                     "agreement",
                                     "pe-shift",
                                     "ffn",
                                     "path-length",
                                     "rope",
                                     "length-generalisation",
                                     "rope-window",
                                     "fixed-state",
                                     "attention-as-rnn"};

}  // namespace

TEST_CASE("try this: every lab's line has a test here, and its fragments make whole commands", "[cli][try]") {
  std::vector<std::string> in_catalogue;
  for (const auto& e : seqgrad::text::entries()) {
    const std::string id(e.id);
    if (id.rfind("lab.", 0) == 0 && id.ends_with(".try") && id != "lab.frame.try")
      in_catalogue.push_back(id.substr(4, id.size() - 8));
  }
  std::vector<std::string> here = kLabs;
  std::sort(in_catalogue.begin(), in_catalogue.end());
  std::sort(here.begin(), here.end());
  CHECK(in_catalogue == here);
  // The Korean line quotes the same commands and fragments (compared as sets: the order of the words around them, and
  // so "without", is the language's).
  for (const std::string& lab : here) {
    auto quoted = [&](seqgrad::text::Lang lang) {
      const std::string line(seqgrad::text::tr("lab." + lab + ".try", lang));
      std::vector<std::string> out;
      for (std::size_t open = line.find('`'); open != std::string::npos; open = line.find('`', open)) {
        const std::size_t close = line.find('`', open + 1);
        out.push_back(line.substr(open + 1, close - open - 1));
        open = close + 1;
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    INFO(lab);
    CHECK(quoted(seqgrad::text::Lang::en) == quoted(seqgrad::text::Lang::ko));
  }
  // How a line is read: "then `--pos sinusoidal`" replaces a value, "without `--tie-qk`" drops a flag.
  const auto rope = commands_of("rope", "`seqgrad train --pos rope --out runs/try`, then `--pos sinusoidal`");
  REQUIRE(rope.size() == 2);
  CHECK(rope[1] == Words{"seqgrad", "train", "--out", "runs/try", "--pos", "sinusoidal"});
  const auto tied = commands_of("x", "`seqgrad train --tie-qk --steps 5`, and again without `--tie-qk`");
  CHECK(tied.back() == Words{"seqgrad", "train", "--steps", "5"});
  const auto own =
      commands_of("attention-by-hand", "`--vectors \"1,0 0,1\" --query 1` asks with b; `--vectors \"2,0 0,1\"`");
  CHECK(own.front() == Words{"seqgrad", "lab", "attention-by-hand", "--vectors", "1,0 0,1", "--query", "1"});
  CHECK(own.back() == Words{"seqgrad", "lab", "attention-by-hand", "--vectors", "2,0 0,1"});  // each fragment alone
}

#define TRY_LINE(lab) \
  TEST_CASE("try this: the line of lab " lab " runs, twice in a row", "[cli][try]") { run_try_line(lab); }
TRY_LINE("shared-weights")
TRY_LINE("two-walls")
TRY_LINE("sequential-time")
TRY_LINE("clipping")
TRY_LINE("gates")
TRY_LINE("gru-gradient")
TRY_LINE("fixed-state")
TRY_LINE("attention-by-hand")
TRY_LINE("context-vector")
TRY_LINE("attention-learned")
TRY_LINE("no-position")
TRY_LINE("quadratic-cost")
TRY_LINE("attention-memory")
TRY_LINE("attention-share")
TRY_LINE("attention-as-rnn")
TRY_LINE("qk-asymmetry")
TRY_LINE("value-proj")
TRY_LINE("sqrt-dk")
TRY_LINE("sqrt-dk-training")
TRY_LINE("multi-head")
TRY_LINE("agreement")
TRY_LINE("pe-shift")
TRY_LINE("ffn")
TRY_LINE("path-length")
TRY_LINE("rope")
TRY_LINE("length-generalisation")
TRY_LINE("rope-window")
