// Keeps the outputs shown in the guides true. A guide shows a command and its
// output as a fenced block:
//
//   ```console
//   $ seqgrad lab sqrt-dk
//   ...what it printed...
//   ```
//
// `guide_outputs --binary PATH FILE...` runs every such command (in the order
// the files give them, in one scratch directory, so that a `train` can make
// the run a later `attention` reads) and fails, showing the first differing
// line, when a block is not what the command prints today. With --update it
// writes the fresh outputs into the files instead (`make docs`).
//
// Times change from run to run, so a number followed by a unit of time
// ("12.4 s", "3.1 ms/step", "88 steps/s", "95.1 GFLOP/s", "time x102.9",
// "took x1.02"; in Korean "0.5초", "시간 x80.0", and "2.4배" on a line about 시간)
// is compared as '#', with the spaces that pad it to a column, and so is every
// number of a line that says its figures are "this machine's" ("이 컴퓨터"). A
// lab whose output has times (its verdict may compare them) is run up to three
// times; if its verdict line still differs (the times of a busy machine turned
// it, or made it inconclusive, with the line that says why) and nothing else
// does, that is said on stderr, and the block is not out of date: a test checks
// that verdict's rule on figures of its own (tests/core/test_labs.cpp).
// Trained figures change in their last digits with the compiler's flags: when
// a guide's first block is `$ seqgrad --version` and the binary's version line
// (which names the build) is not the one shown, that guide's numbers are all
// compared as '#' (and a Korean particle after one in one form), with a note, and --update
// rewrites them; so are the shades
// of a drawn map (' ', '░', '▒', '▓', '█'), which may be one step apart.
//
// A block may also start with "$ python3 ..." (the guides' last section runs
// an export's check in PyTorch): such blocks run only with --python PATH
// (`make test-export`, which has Debian's python3-torch), their numbers always
// compared as '#' (they are PyTorch's float sums, which change with its BLAS
// kernels), and are left as they are otherwise. --section N checks only the
// blocks under the heading "## N." (and the version block).
//
// Given both guides, a command they both show runs once, and a lab the Korean
// guide shows with --lang ko takes the result its English run computed
// (SEQGRAD_LAB_CACHE, lab_commands.cpp): a lab's result holds its figure lines
// in both languages, so the Korean block is checked whole (the frame, the
// figures, the verdict, the question in Korean) at half the labs' time. A timed lab's
// second and third runs take fresh times.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Block {
  std::size_t first_line = 0;  // index of the "$ seqgrad ..." line
  std::size_t end_line = 0;    // index of the closing fence
  std::string command;         // what follows "$ "
  std::string section;         // N of the last "## N." heading above it
  bool python() const { return command.rfind("python3 ", 0) == 0; }
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<Block> find_blocks(const std::vector<std::string>& lines, const std::string& path) {
  std::vector<Block> blocks;
  std::string section;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("## ", 0) == 0) section = lines[i].substr(3, lines[i].find('.') - 3);
    if (lines[i] != "```console") continue;
    if (i + 1 >= lines.size() ||
        (lines[i + 1].rfind("$ seqgrad", 0) != 0 && lines[i + 1].rfind("$ python3 ", 0) != 0)) {
      throw std::runtime_error(path + ":" + std::to_string(i + 2) +
                               ": a console block must start with \"$ seqgrad ...\" or \"$ python3 ...\"");
    }
    Block b{i + 1, 0, lines[i + 1].substr(2), section};
    std::size_t j = i + 2;
    while (j < lines.size() && lines[j] != "```") ++j;
    if (j == lines.size())
      throw std::runtime_error(path + ":" + std::to_string(i + 1) + ": the console block is never closed");
    b.end_line = j;
    blocks.push_back(b);
    i = j;
  }
  return blocks;
}

// stdout of `command` (which starts with "seqgrad", or "python3" run by `python`), run by the shell in `dir`.
// A lab's result is kept in `dir`/lab-cache unless `fresh`.
std::string run(const std::string& binary, const std::string& command, const std::string& dir,
                const std::string& python = "", bool fresh = false) {
  // The language is the command's own (--lang), never the reader's locale.
  const std::string program = command.rfind("python3 ", 0) == 0 ? python : binary;
  const std::string cache = fresh ? "" : " SEQGRAD_LAB_CACHE='" + dir + "/lab-cache'";
  const std::string line = "cd '" + dir + "' && NO_COLOR=1 LC_ALL=C.UTF-8" + cache + " '" + program + "'" +
                           command.substr(command.find(' ')) + " 2>/dev/null";
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);  // a lab that does not hold exits 1, and the guide shows it saying so
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (out.empty())
    throw std::runtime_error("`" + command + "` printed nothing (exit status " + std::to_string(status) + ")");
  return out;
}

std::string mask_numbers(const std::string& s);

std::string mask_times(const std::string& s) {
  // A line of figures that are this machine's times in another form (a share of the time) says so: every number
  // in it is compared as '#'.
  const bool one_line = s.find('\n') == std::string::npos;
  if (one_line && (s.find("this machine's") != std::string::npos || s.find("이 컴퓨터") != std::string::npos))
    return mask_numbers(s);
  static const std::regex unit(R"( *\d+(\.\d+)?( ?)(GFLOP/s|ms/step|steps/s|ms|s)\b)");
  static const std::regex ratio(R"((time|took|,|시간) x\d+(\.\d+)?)");
  // In Korean: seconds ("0.5초", "스텝/초"), and on a line about time ("시간"), how many times ("2.4배").
  static const std::regex seconds(R"( *\d+(\.\d+)?(초|스텝/초))");
  static const std::regex times(R"( *\d+(\.\d+)?배)");
  std::string out = std::regex_replace(std::regex_replace(s, unit, " #$2$3"), ratio, "$1 x#");
  out = std::regex_replace(out, seconds, " #$2");
  if (one_line && s.find("시간") != std::string::npos) out = std::regex_replace(out, times, " #배");
  return out;
}

// The two verdict lines of a lab, in both languages, from the catalogue.
struct Entry {
  const char *id, *en, *ko;
};
constexpr Entry kWebEntries[] = {
#include "src/text/catalogue_web.inc"
};

// A lab's verdict line ("the claim holds on these figures: ...", in either language), from the catalogue.
bool is_verdict(const std::string& line) {
  for (const Entry& e : kWebEntries)
    if (std::string(e.id) == "lab.frame.holds" || std::string(e.id) == "lab.frame.fails" ||
        std::string(e.id) == "lab.frame.inconclusive")
      for (const std::string words : {e.en, e.ko})
        if (line.rfind(words, 0) == 0) return true;
  return false;
}

// A lab's condition line: "  3. [held] ...".
bool is_condition(const std::string& line) {
  static const std::regex condition(R"(  \d+\. \[.*)");
  return std::regex_match(line, condition);
}

std::string mask_numbers(const std::string& s) {
  static const std::regex number(R"( *[-+]?\d+(\.\d+)?(e[-+]?\d+)?)");  // with the spaces that pad it to a column
  // A Korean particle after a number follows how its last digit is read ("0.515가", "0.513이"): one form of each.
  static const std::pair<std::regex, const char*> particles[] = {{std::regex(R"(#(이|가)(?=[ ,.)]|$))"), "#가"},
                                                                 {std::regex(R"(#(과|와)(?=[ ,.)]|$))"), "#와"},
                                                                 {std::regex(R"(#(은|는)(?=[ ,.)]|$))"), "#는"},
                                                                 {std::regex(R"(#(을|를)(?=[ ,.)]|$))"), "#를"},
                                                                 {std::regex(R"(#(으로|로)(?=[ ,.)]|$))"), "#로"}};
  std::string out = std::regex_replace(s, number, " #");
  for (const auto& [particle, one_form] : particles) out = std::regex_replace(out, particle, one_form);
  return out;
}

// The code points of a UTF-8 line.
std::u32string code_points(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n && i + static_cast<std::size_t>(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
    out.push_back(cp);
    i += static_cast<std::size_t>(n);
  }
  return out;
}

// Two lines of a drawn map whose shades are each at most one step apart (and all else the same).
bool shades_close(const std::string& a, const std::string& b) {
  static const std::u32string levels = U" \u2591\u2592\u2593\u2588";  // ' ' ░ ▒ ▓ █
  const std::u32string x = code_points(a), y = code_points(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) continue;
    const auto p = levels.find(x[i]), q = levels.find(y[i]);
    if (p == std::u32string::npos || q == std::u32string::npos || (p > q ? p - q : q - p) > 1) return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary, python, only_section;
  bool update = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--update") {
      update = true;
    } else if (a == "--binary" && i + 1 < argc) {
      binary = std::filesystem::absolute(argv[++i]).string();
    } else if (a == "--python" && i + 1 < argc) {
      python = argv[++i];
    } else if (a == "--section" && i + 1 < argc) {
      only_section = argv[++i];
    } else {
      files.push_back(a);
    }
  }
  if (binary.empty() || files.empty()) {
    std::cerr << "usage: guide_outputs --binary PATH/TO/seqgrad [--python PATH] [--section N] [--update] GUIDE.md...\n";
    return 2;
  }
  char scratch_template[] = "/tmp/seqgrad-guide-XXXXXX";
  const char* scratch = mkdtemp(scratch_template);
  if (!scratch) {
    std::cerr << "cannot make a scratch directory\n";
    return 2;
  }
  std::map<std::string, std::string> outputs;  // a command shown in two guides runs once
  int stale = 0, checked = 0, left = 0;
  try {
    for (const std::string& path : files) {
      std::vector<std::string> lines = read_lines(path);
      const std::vector<Block> blocks = find_blocks(lines, path);
      std::vector<std::string> rewritten;
      std::size_t copied = 0;
      bool other_build = false;
      for (const Block& b : blocks) {
        const bool version = &b == &blocks.front() && b.command == "seqgrad --version";
        if ((b.python() && python.empty()) || (!only_section.empty() && b.section != only_section && !version)) {
          left += b.python() && python.empty();
          continue;  // copied as it stands below
        }
        auto [it, fresh] = outputs.try_emplace(b.command);
        if (fresh) it->second = run(binary, b.command, scratch, python);
        std::vector<std::string> now = split(it->second);
        const std::vector<std::string> shown(lines.begin() + static_cast<long>(b.first_line) + 1,
                                             lines.begin() + static_cast<long>(b.end_line));
        ++checked;
        std::size_t k = 0;
        const bool from_python = b.python();
        auto same = [&](const std::string& a, const std::string& b) {
          if (from_python) return mask_numbers(a) == mask_numbers(b);
          return other_build ? mask_numbers(a) == mask_numbers(b) || shades_close(a, b)
                             : mask_times(a) == mask_times(b);
        };
        const auto first_difference = [&] {
          k = 0;
          while (k < now.size() && k < shown.size() && same(now[k], shown[k])) ++k;
          return k < now.size() || k < shown.size();
        };
        bool differs = first_difference();
        // A timed lab's verdict is computed from its times, and a step timed while the other guide's commands
        // share the cores can turn it: such a lab gets two more runs before its block counts as out of date.
        const bool timed_lab = b.command.rfind("seqgrad lab ", 0) == 0 && mask_times(it->second) != it->second;
        for (int again = 0; differs && timed_lab && !update && again < 2; ++again) {
          it->second = run(binary, b.command, scratch, "", true);
          now = split(it->second);
          differs = first_difference();
        }
        // On a busy machine a timed condition is left undecided, and the verdict with it: a block whose other lines
        // are the same passes, with the difference said.
        if (differs && timed_lab && !update && now.size() == shown.size()) {
          std::size_t turned = now.size();  // the verdict line, or else the first condition that turned
          bool only_verdicts = true;
          for (std::size_t i = 0; i < now.size(); ++i) {
            if (same(now[i], shown[i])) continue;
            const bool verdict = is_verdict(now[i]) && is_verdict(shown[i]);
            only_verdicts = only_verdicts && (verdict || (is_condition(now[i]) && is_condition(shown[i])));
            if (verdict || turned == now.size()) turned = i;
          }
          if (only_verdicts) {
            std::cerr << path << ":" << b.first_line + 2 + turned << ": `" << b.command
                      << "` gave another verdict on this machine's times (three runs): " << now[turned] << "\n";
            differs = false;
          }
        }
        if (version && differs && !update) {
          std::cerr << path << ": written with " << (shown.empty() ? "(nothing)" : shown[0]) << ", checked with "
                    << it->second << ": numbers are compared as '#'\n";
          other_build = true;
          differs = false;
        }
        if (differs) {
          ++stale;
          if (!update) {
            std::cerr << path << ":" << b.first_line + 2 + k << ": the output of `" << b.command << "` differs\n"
                      << "  the guide shows: " << (k < shown.size() ? shown[k] : "(nothing more)") << "\n"
                      << "  the command prints: " << (k < now.size() ? now[k] : "(nothing more)") << "\n";
          }
        }
        rewritten.insert(rewritten.end(), lines.begin() + static_cast<long>(copied),
                         lines.begin() + static_cast<long>(b.first_line) + 1);
        // A block that differs only in its times keeps them, so that `make docs` changes nothing needlessly.
        // A python3 block, whose numbers are never compared, takes them fresh when written.
        const std::vector<std::string>& keep = differs || (update && from_python) ? now : shown;
        rewritten.insert(rewritten.end(), keep.begin(), keep.end());
        copied = b.end_line;
      }
      rewritten.insert(rewritten.end(), lines.begin() + static_cast<long>(copied), lines.end());
      if (update) {
        std::ofstream out(path);
        for (const std::string& l : rewritten) out << l << '\n';
      }
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  std::filesystem::remove_all(scratch);
  std::cout << checked << " outputs checked, " << stale << (update ? " rewritten" : " out of date")
            << (left ? ", " + std::to_string(left) + " python3 blocks left to make test-export" : "") << "\n";
  if (!update && stale > 0) std::cerr << "run `make docs` to write what the commands print today into the guides\n";
  return !update && stale > 0 ? 1 : 0;
}
