#include "src/report/terminal.h"

#include <unistd.h>

#include <fmt/core.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace seqgrad::report {

bool can_redraw(int fd) {
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !(term && std::string_view(term) == "dumb");
}

bool use_colour() {
  const char* no = std::getenv("NO_COLOR");
  return !(no && *no) && can_redraw(STDOUT_FILENO);
}

std::string terminal_log_chart(const std::vector<Series>& series, const std::string& x_label,
                               const std::string& y_label, int width, int height) {
  static const char kMarkers[] = "ox+*#@%&";
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.y[i] > 0 && std::isfinite(s.y[i])) {
        x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
        y0 = std::min(y0, std::log10(s.y[i])), y1 = std::max(y1, std::log10(s.y[i]));
      }
  if (!std::isfinite(x0)) return "(nothing to plot: every value is zero)\n";
  y0 = std::floor(y0);
  y1 = std::ceil(y1);
  if (y1 == y0) y1 += 1;
  if (x1 == x0) x1 += 1;
  std::vector<std::string> grid(static_cast<std::size_t>(height), std::string(static_cast<std::size_t>(width), ' '));
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!(s.y[i] > 0 && std::isfinite(s.y[i]))) continue;
      const int col = static_cast<int>(std::lround((s.x[i] - x0) / (x1 - x0) * (width - 1)));
      const int row = static_cast<int>(std::lround((y1 - std::log10(s.y[i])) / (y1 - y0) * (height - 1)));
      grid[static_cast<std::size_t>(row)][static_cast<std::size_t>(col)] = kMarkers[k % 8];
    }
  }
  std::string out = fmt::format("{} (log scale)\n", y_label);
  for (int r = 0; r < height; ++r) {
    const double e = y1 - (y1 - y0) * r / (height - 1);
    const bool labelled = r == 0 || r == height - 1 || r == (height - 1) / 2;
    out += fmt::format("{:>8} |{}\n", labelled ? fmt::format("1e{:.0f}", e) : "", grid[static_cast<std::size_t>(r)]);
  }
  out += fmt::format("{:>8} +{}\n", "", std::string(static_cast<std::size_t>(width), '-'));
  out += fmt::format("{:>8}  {:<{}}{:>}\n", "", fmt::format("{:g}", x0), width / 2, fmt::format("{:g}", x1));
  out += fmt::format("{:>8}  {}\n", "", x_label);
  for (std::size_t k = 0; k < series.size(); ++k)
    out += fmt::format("{:>8}  {} {}\n", "", kMarkers[k % 8], series[k].name);
  return out;
}

std::string terminal_heatmap(const std::vector<std::vector<double>>& values, const std::vector<std::string>& row_labels,
                             bool log_scale, bool colour) {
  static const char* const kShades[] = {" ", "░", "▒", "▓", "█"};  // Unicode shades, low to high
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto f = [&](double v) { return log_scale ? (v > 0 ? std::log10(v) : std::nan("")) : v; };
  for (const auto& row : values)
    for (double v : row)
      if (std::isfinite(f(v))) lo = std::min(lo, f(v)), hi = std::max(hi, f(v));
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi == lo) hi = lo + 1;
  std::size_t label_width = 0;
  for (const auto& l : row_labels) label_width = std::max(label_width, l.size());
  std::string out;
  for (std::size_t r = 0; r < values.size(); ++r) {
    out += fmt::format("{:>{}} ", r < row_labels.size() ? row_labels[r] : "", label_width);
    for (double v : values[r]) {
      const double u = std::isfinite(f(v)) ? (f(v) - lo) / (hi - lo) : 0;
      if (colour) {
        const int grey = 232 + static_cast<int>(std::lround(u * 23));  // the 24-step grey ramp
        out += fmt::format("\x1b[48;5;{}m  \x1b[0m", grey);
      } else {
        const char* shade = kShades[std::lround(u * 4)];
        out += shade;
        out += shade;
      }
    }
    out += "\n";
  }
  out += fmt::format("{:>{}} scale: {} = {:.3g} ... {} = {:.3g}{}\n", "", label_width, colour ? "dark" : "' '",
                     log_scale ? std::pow(10, lo) : lo, colour ? "light" : "'█'", log_scale ? std::pow(10, hi) : hi,
                     log_scale ? " (log)" : "");
  return out;
}

}  // namespace seqgrad::report
