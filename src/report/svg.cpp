#include "src/report/svg.h"

#include <fmt/core.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "src/text/catalogue.h"

namespace seqgrad::report {

namespace {

// A colour-blind-safe palette (Okabe & Ito) for series.
const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

// Viridis-like ramp for heatmaps, from dark blue (low) to yellow (high).
std::string ramp(double u) {
  static const double stops[][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  u = std::clamp(u, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(u));
  const double f = u - i;
  auto mix = [&](int c) { return static_cast<int>(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

// The fonts of a chart's text: in Korean, fonts that have Hangul before the generic one.
std::string font_family() {
  return text::lang() == text::Lang::ko ? "font-family=\"" + std::string(kKoreanFonts) + "\""
                                        : "font-family=\"sans-serif\"";
}

std::string tick_text(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        break;
      default: {
        // XML 1.0 allows no other control character, not even as &#1;: show its
        // Unicode picture instead (U+2400 + c, and U+2421 for DEL), as a token would be read.
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) {
          const unsigned picture = u == 0x7F ? 0x2421 : 0x2400 + u;
          out += static_cast<char>(0xE0 | (picture >> 12));
          out += static_cast<char>(0x80 | ((picture >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (picture & 0x3F));
        } else {
          out += c;
        }
      }
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

std::string svg(const LineChart& c) {
  const double left = 70, right = 150, top = 36, bottom = 48;  // room for ticks, labels and the legend
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  auto usable = [&](double y) { return std::isfinite(y) && (!c.log_y || y > 0); };
  for (const Series& s : c.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(s.y[i])) continue;
      const double y = c.log_y ? std::log10(s.y[i]) : s.y[i];
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  if (c.log_y) {
    y0 = std::floor(y0);
    y1 = std::ceil(y1);
  }
  if (y1 == y0) y1 = y0 + 1;
  if (c.y_range && !c.log_y) {
    y0 = c.y_range->first;
    y1 = c.y_range->second;
  } else if (!c.log_y) {
    const double pad = 0.05 * (y1 - y0);
    y0 -= pad;
    y1 += pad;
  }
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + ph - ((c.log_y ? std::log10(y) : y) - y0) / (y1 - y0) * ph; };

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "{} font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
      c.width, c.height, c.width, c.height, font_family(), left + pw / 2, escape_xml(c.title));
  // Axes, grid and ticks.
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", left, top,
                     pw, ph);
  for (double t : nice_ticks(x0, x1, 6)) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        px(t), top, top + ph, top + ph + 16, tick_text(t));
  }
  if (c.log_y) {
    const int step = std::max(1, static_cast<int>(std::ceil((y1 - y0) / 8)));
    for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); e += step) {
      const double y = top + ph - (e - y0) / (y1 - y0) * ph;
      out += fmt::format(
          "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" "
          "text-anchor=\"end\">1e{5}</text>\n",
          left, left + pw, y, left - 6, y + 4, e);
    }
  } else {
    for (double t : nice_ticks(y0, y1, 6)) {
      out += fmt::format(
          "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" "
          "text-anchor=\"end\">{5}</text>\n",
          left, left + pw, py(t), left - 6, py(t) + 4, tick_text(t));
    }
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, c.height - 10,
                     escape_xml(c.x_label));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     top + ph / 2, escape_xml(c.log_y ? text::msg("inspect.chart.log_scale", c.y_label) : c.y_label));
  // Lines, then the legend to the right of the plot. Each series has its own
  // dash pattern as well as its colour, so that a line drawn over another
  // (the RNN's loss under the LSTM's) still shows; later series are drawn on top.
  constexpr const char* kDashes[] = {"", "7 4", "2 3", "10 3 2 3", "4 4"};
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    const char* colour = kColours[k % 7];
    const std::string dash = *kDashes[k % 5] ? fmt::format(" stroke-dasharray=\"{}\"", kDashes[k % 5]) : "";
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (usable(s.y[i])) points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", colour, dash,
                       points);
    const double ly = top + 10 + 20.0 * static_cast<double>(k);
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"3\"{7}/><text x=\"{4}\" "
        "y=\"{5}\">{6}</text>\n",
        left + pw + 12, left + pw + 32, ly, colour, left + pw + 38, ly + 4, escape_xml(s.name), dash);
  }
  if (c.series.size() > 1) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#666\">{}</text>\n", left + pw + 12,
                       top + 10 + 20.0 * static_cast<double>(c.series.size()) + 2,
                       escape_xml(text::msg("inspect.chart.last_on_top")));
  }
  return out + "</svg>\n";
}

std::string svg(const Heatmap& m) {
  const double left = 70, right = 90, top = 36, bottom = 48;
  const double pw = m.width - left - right, ph = m.height - top - bottom;
  const std::size_t rows = m.values.size(), cols = rows ? m.values[0].size() : 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto scaled = [&](double v) { return m.log_scale ? (v > 0 ? std::log10(v) : std::nan("")) : v; };
  for (const auto& row : m.values)
    for (double v : row)
      if (std::isfinite(scaled(v))) lo = std::min(lo, scaled(v)), hi = std::max(hi, scaled(v));
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (m.log_scale) lo = std::floor(lo), hi = std::ceil(hi);  // a log scale from one whole decade to another
  if (m.value_range) lo = scaled(m.value_range->first), hi = scaled(m.value_range->second);
  if (hi == lo) hi = lo + 1;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "{} font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
      m.width, m.height, m.width, m.height, font_family(), left + pw / 2, escape_xml(m.title));
  const double cw = cols ? pw / static_cast<double>(cols) : 0, ch = rows ? ph / static_cast<double>(rows) : 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double v = scaled(m.values[r][c]);
      out += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"/>\n",
                         left + cw * static_cast<double>(c), top + ch * static_cast<double>(r), cw + 0.3, ch + 0.3,
                         std::isfinite(v) ? ramp((v - lo) / (hi - lo)) : "#ffffff");
    }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", left, top,
                     pw, ph);
  // Ticks: at most about 10 per axis, centred on their cells.
  const std::size_t xstep = std::max<std::size_t>(1, (m.x_ticks.size() + 9) / 10),
                    ystep = std::max<std::size_t>(1, (m.y_ticks.size() + 9) / 10);
  for (std::size_t c = 0; c < m.x_ticks.size() && c < cols; c += xstep)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       left + cw * (static_cast<double>(c) + 0.5), top + ph + 16, escape_xml(m.x_ticks[c]));
  for (std::size_t r = 0; r < m.y_ticks.size() && r < rows; r += ystep)
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       top + ch * (static_cast<double>(r) + 0.5) + 4, escape_xml(m.y_ticks[r]));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, m.height - 10,
                     escape_xml(m.x_label));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     top + ph / 2, escape_xml(m.y_label));
  // The colour scale: a bar with its low and high values.
  const double bx = left + pw + 20;
  for (int i = 0; i < 50; ++i)
    out += fmt::format("<rect x=\"{}\" y=\"{:.2f}\" width=\"14\" height=\"{:.2f}\" fill=\"{}\"/>\n", bx,
                       top + ph * (1 - (i + 1) / 50.0), ph / 50 + 0.3, ramp(i / 49.0));
  auto label = [&](double v) {
    return m.log_scale ? fmt::format("1e{}", static_cast<int>(std::lround(v))) : tick_text(v);
  };
  out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", bx + 18, top + 10, label(hi));
  out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", bx + 18, top + ph, label(lo));
  out += fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(90 {0} {1})\">{2}</text>\n",
                     bx + 52, top + ph / 2,
                     escape_xml(m.log_scale ? text::msg("inspect.chart.log", m.value_label) : m.value_label));
  return out + "</svg>\n";
}

}  // namespace seqgrad::report
