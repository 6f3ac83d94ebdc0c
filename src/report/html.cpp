#include "src/report/html.h"

#include "src/report/svg.h"
#include "src/text/catalogue.h"

namespace seqgrad::report {

std::string html_table(const Table& t) {
  std::string out = "<table" + (t.id.empty() ? std::string() : " id=\"" + escape_xml(t.id) + "\"") + ">\n<tr>";
  for (const auto& h : t.header) out += "<th>" + escape_xml(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + escape_xml(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string html(const Page& page) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"" + std::string(text::to_string(text::lang())) +
      "\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape_xml(page.title) +
      "</title>\n<style>\n"
      "body { font-family: " +
      std::string(text::lang() == text::Lang::ko ? kKoreanFonts : "sans-serif") +
      "; max-width: 1200px; margin: 2em auto; padding: 0 1em; color: #222; }\n"
      "h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }\n"
      ".figures { display: flex; flex-wrap: wrap; gap: 12px; }\n"
      ".figures svg { max-width: 100%; height: auto; border: 1px solid #eee; }\n"
      "table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }\n"
      "th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }\n"
      "th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }\n"
      "p { line-height: 1.45; max-width: 60em; }\n"
      "</style>\n</head>\n<body>\n<h1>" +
      escape_xml(page.title) + "</h1>\n";
  if (!page.subtitle.empty()) out += "<p>" + escape_xml(page.subtitle) + "</p>\n";
  for (const Section& s : page.sections) {
    out += "<h2>" + escape_xml(s.heading) + "</h2>\n";
    if (!s.text.empty()) out += "<p>" + escape_xml(s.text) + "</p>\n";
    if (!s.svgs.empty()) {
      out += "<div class=\"figures\">\n";
      for (const auto& svg : s.svgs) out += svg;
      out += "</div>\n";
    }
    for (const auto& t : s.tables) out += html_table(t);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace seqgrad::report
