#include "src/train/progress.h"

#include <unistd.h>

#include <fmt/core.h>
#include <cstdio>
#include <memory>

#include "src/report/terminal.h"
#include "src/text/catalogue.h"

namespace seqgrad::train {

namespace {
std::string clock_text(double s) {
  if (!(s >= 0) || s > 1e7) return "--:--";
  const long t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{:02}:{:02}", t / 60, t % 60);
}
// Progress is a courtesy: a closed pipe or a full disk behind it (with SIGPIPE ignored, as main does) must not
// stop the training it reports on. The command's own output says at the end whether it was written.
void put(std::FILE* out, const std::string& text) {
  std::fputs(text.c_str(), out);
  std::fflush(out);
}
}  // namespace

TrainObserver progress_printer(std::FILE* out, const std::string& label) {
  const bool tty = report::can_redraw(::fileno(out));  // else a plain line now and then, no escape sequences
  auto last_drawn = std::make_shared<double>(-1.0);
  auto first = std::make_shared<long>(-1);
  TrainObserver o;
  o.on_step = [=](const StepLog& s, long total) {
    if (*first < 0) *first = s.step - 1;
    const long done = s.step - *first, remaining = total - s.step;
    const double rate = s.elapsed > 0 ? static_cast<double>(done) / s.elapsed : 0;
    const double eta = rate > 0 ? static_cast<double>(remaining) / rate : -1;
    const bool last = s.step == total;
    const std::string acc = s.accuracy ? text::msg("train.progress.acc", *s.accuracy) : "";
    if (tty) {
      if (!last && s.elapsed - *last_drawn < 0.1) return;  // redraw at most ten times a second
      *last_drawn = s.elapsed;
      constexpr int width = 24;
      const int filled = total > 0 ? static_cast<int>(width * s.step / total) : width;
      put(out, fmt::format("\r{}\x1b[K{}",
                           text::msg("train.progress.bar", label, std::string(static_cast<std::size_t>(filled), '#'),
                                     std::string(static_cast<std::size_t>(width - filled), '.'), s.step, total, s.loss,
                                     acc, rate, clock_text(eta)),
                           last ? "\n" : ""));
    } else {
      // About twenty lines per run, and the last step.
      const long every = std::max(1L, total / 20);
      if (s.step % every != 0 && !last) return;
      put(out, text::msg("train.progress.line", label, s.step, total, s.loss, acc, s.grad_norm, s.lr, rate,
                         clock_text(eta)) +
                   "\n");
    }
  };
  o.on_message = [out](const std::string& m) { put(out, m + "\n"); };
  return o;
}

}  // namespace seqgrad::train
