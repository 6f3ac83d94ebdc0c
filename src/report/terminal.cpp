#include "src/report/terminal.h"

#include <unistd.h>

#include <fmt/core.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "src/text/catalogue.h"

namespace seqgrad::report {

std::size_t display_width(std::string_view s) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = text::utf8_char_at(s, i);
    if (n == 0) {  // not UTF-8: a byte is a column
      ++width, ++i;
      continue;
    }
    char32_t c = n == 1 ? static_cast<unsigned char>(s[i]) : static_cast<unsigned char>(s[i]) & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
                      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
                      (c >= 0xFFE0 && c <= 0xFFE6);
    width += wide ? 2 : 1;
    i += n;
  }
  return width;
}

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
  if (!std::isfinite(x0)) return fmt::format("{}\n", text::msg("inspect.chart.nothing"));
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
  std::string out = fmt::format("{}\n", text::msg("inspect.chart.log_scale", y_label));
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
  out +=
      fmt::format("{:>{}} {}\n", "", label_width,
                  text::msg("inspect.chart.scale", colour ? text::msg("inspect.chart.dark") : "' '",
                            log_scale ? std::pow(10, lo) : lo, colour ? text::msg("inspect.chart.light") : "'█'",
                            log_scale ? std::pow(10, hi) : hi, log_scale ? text::msg("inspect.chart.log_suffix") : ""));
  return out;
}

}  // namespace seqgrad::report
