// Charts as standalone SVG strings: a line chart with linear or log axes, and
// a heatmap with a colour scale. Pure output: no engine, no models.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::report {

struct Series {
  std::string name;
  std::vector<double> x, y;  // points with a non-finite y, or y <= 0 on a log axis, are left out
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log_y = false;
  std::vector<Series> series;
  int width = 560, height = 340;
  // The y axis from first to second whatever the data (attention weights: 0 to 1,
  // so that a row of 0.1s does not fill the plot); unset: fitted to the data.
  std::optional<std::pair<double, double>> y_range = std::nullopt;
};

struct Heatmap {
  std::string title, x_label, y_label, value_label;
  std::vector<std::string> x_ticks, y_ticks;  // one per column / row (thinned when drawn)
  std::vector<std::vector<double>> values;    // values[row][col]
  bool log_scale = false;                     // colour by log10 of the value
  int width = 560, height = 340;
  // The colour scale from first to second whatever the data; unset: its least to its largest value.
  std::optional<std::pair<double, double>> value_range = std::nullopt;
};

// The fonts of text in Korean, Hangul fonts first and the generic one last (as
// CSS and an SVG font-family attribute both read them); English text is drawn
// in plain sans-serif.
inline constexpr const char* kKoreanFonts = "'Noto Sans CJK KR', 'Malgun Gothic', 'Apple SD Gothic Neo', sans-serif";

// In the process's language (text::lang()): the words the chart adds itself
// ("log scale", the legend's note), and the fonts.
std::string svg(const LineChart& chart);
std::string svg(const Heatmap& map);

// Escapes &, <, >, " for text inside SVG or HTML, and shows a control character
// other than tab, newline and return (which XML 1.0 cannot carry) as its Unicode picture.
std::string escape_xml(const std::string& text);

// The "nice" tick values for an axis from lo to hi, about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count);

}  // namespace seqgrad::report
