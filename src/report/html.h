// A self-contained HTML page: headings, paragraphs, inline SVG figures and
// tables, with its style inline and no scripts, readable offline.
#pragma once

#include <string>
#include <vector>

namespace seqgrad::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string id;  // an HTML id, so that tests and readers can find the table
};

struct Section {
  std::string heading;
  std::string text;               // a paragraph (escaped)
  std::vector<std::string> svgs;  // figures, side by side when they fit
  std::vector<Table> tables;
};

struct Page {
  std::string title;
  std::string subtitle;
  std::vector<Section> sections;
};

std::string html(const Page& page);
std::string html_table(const Table& table);

}  // namespace seqgrad::report
