// Charts for the terminal: a line chart on a log scale drawn with one marker
// per series, and a heatmap in Unicode shades (or colour where allowed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/report/svg.h"

namespace seqgrad::report {

// A plot of the series, y on a log10 scale, `width` x `height` character cells
// for the plot area; the legend names each series' marker.
std::string terminal_log_chart(const std::vector<Series>& series, const std::string& x_label,
                               const std::string& y_label, int width = 64, int height = 14);

// Two character cells per value: the Unicode shades " ░▒▓█" from low to high,
// or with `colour` a 24-step grey background (ANSI 256 colours).
std::string terminal_heatmap(const std::vector<std::vector<double>>& values, const std::vector<std::string>& row_labels,
                             bool log_scale, bool colour);

// The columns `s` takes on a terminal: a Hangul syllable or a CJK character
// takes two, any other character one (fmt pads by the same count).
std::size_t display_width(std::string_view s);

// A terminal that understands escape sequences: `fd` is a terminal and TERM is not "dumb".
bool can_redraw(int fd);
// Colour unless NO_COLOR is set or standard output is not such a terminal.
bool use_colour();

}  // namespace seqgrad::report
