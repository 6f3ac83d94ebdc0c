// seqgrad lab: the chapter's claims, each run as an experiment with a computed verdict.
#include <fmt/core.h>
#include <unistd.h>
#include <cmath>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "src/cli/commands.h"
#include "src/io/files.h"
#include "src/labs/lab.h"
#include "src/train/run_files.h"

namespace seqgrad::cli {

using text::Lang;

namespace {

// "1,0 0.9,0.1 0,1": vectors separated by spaces, components by commas.
std::vector<std::vector<double>> parse_vectors(const std::string& text) {
  std::vector<std::vector<double>> out;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    std::vector<double> v;
    std::istringstream parts(word);
    for (std::string part; std::getline(parts, part, ',');) {
      const std::optional<double> x = parse_finite(part);
      if (!x)
        throw std::invalid_argument("--vectors: '" + part + "' in '" + word +
                                    "' is not a number; write vectors as 1,0 0.9,0.1 0,1");
      v.push_back(*x);
    }
    out.push_back(v);
  }
  // The scores are dot products: one that overflows a double would make every weight NaN.
  for (const auto& u : out)
    for (const auto& v : out) {
      if (u.size() != v.size()) continue;
      double dot = 0;
      for (std::size_t i = 0; i < u.size(); ++i) dot += u[i] * v[i];
      if (!std::isfinite(dot))
        throw std::invalid_argument(
            "--vectors: the numbers are too large: a dot product of two vectors overflows "
            "a double (keep every number under about 1e150)");
    }
  return out;
}

// Each picture as DIR/FILE, written whole; the paths written.
std::vector<std::string> write_pictures(const labs::LabResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw std::runtime_error("--svg: cannot make the directory " + dir + ": " +
                             (ec ? ec.message() : std::string("a file of that name is there")));
  std::vector<std::string> paths;
  for (const labs::Picture& p : r.pictures) {
    paths.push_back(dir + "/" + p.file);
    train::check_output("--svg", paths.back());
    io::write_file(paths.back(), p.svg);
  }
  return paths;
}

// Asks the lab's question on standard output and reads the answer from
// standard input, asking again after an answer that is not in the form asked
// for. An empty line shows the figures without grading.
std::string read_answer(const labs::Lab& lab, Lang lang) {
  fmt::print("{} ({})\n{}\n", lab.name, labs::source_text(lab, lang),
             text::trf("lab.frame.question", lang, labs::question_text(lab, lang)));
  for (;;) {
    fmt::print("{}", text::trf("lab.frame.prompt", lang, labs::format_text(lab, lang)));
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line))
      throw std::invalid_argument(
          "no answer: the input ended before one was typed (run again and type it, "
          "give it with --answer, or --reveal to see the figures without one)");
    if (!::isatty(0)) fmt::print("{}\n", line);  // typed on a terminal, it is on the screen already
    if (line.find_first_not_of(" \t\r") == std::string::npos) return "";
    try {
      labs::parse_answer_numbers(line, labs::format_text(lab, Lang::en));
      return line;
    } catch (const std::invalid_argument& e) {
      fmt::print("{}\n", e.what());
    }
  }
}

}  // namespace

void add_lab_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    std::string name, vectors, answer, lang, svg;
    int query = 0;
    bool list = false, json = false, predict = false, reveal = false;
  };
  auto a = std::make_shared<Args>();
  auto* lab = app.add_subcommand("lab", "run one of the chapter's claims as an experiment and say whether it holds");
  lab->add_option("name", a->name, "the lab (see --list)");
  lab->add_flag("--list", a->list, "list the labs");
  lab->add_flag("--json", a->json, "print name, claim, figures and holds as JSON");
  auto* vectors =
      lab->add_option("--vectors", a->vectors, "attention-by-hand: your own word vectors, e.g. \"1,0 0.9,0.1 0,1\"");
  lab->add_option("--query", a->query, "attention-by-hand: which of --vectors is the query (from 0)")
      ->capture_default_str()
      ->needs(vectors);
  auto* answer = lab->add_option("--answer", a->answer,
                                 "a lab that answers a self-check question (attention-by-hand, quadratic-cost): "
                                 "your answer, graded before the figures are shown; exit 0 when it is right");
  auto* predict = lab->add_flag("--predict", a->predict,
                                "ask for your answer on the terminal first (the default there for such a lab)");
  auto* reveal = lab->add_flag("--reveal", a->reveal, "show the figures without asking for your answer");
  auto* svg = lab->add_option("--svg", a->svg,
                              "write the lab's pictures (SVG files) into this directory: pe-shift, sqrt-dk and "
                              "attention-learned draw them");
  add_lang_option(lab, a->lang, "the claims, questions and verdicts");
  answer->excludes(predict)->excludes(reveal)->excludes(vectors);
  predict->excludes(reveal)->excludes(vectors);
  commands.emplace_back(lab, [a, vectors, svg, answer] {
    const Lang lang = chosen_lang(a->lang);
    if (vectors->count() > 0 && a->vectors.find_first_not_of(" \t") == std::string::npos) {
      throw std::invalid_argument("--vectors is empty; write vectors as 1,0 0.9,0.1 0,1");
    }
    if (a->list || a->name.empty()) {
      if (a->name.empty() && !a->list) throw std::invalid_argument("name a lab, or --list them");
      if (a->json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& l : labs::all_labs())
          j.push_back({{"name", l.name}, {"source", labs::source_text(l, lang)}, {"claim", labs::claim_text(l, lang)}});
        std::cout << j.dump(2) << "\n";
      } else {
        for (const auto& l : labs::all_labs())
          fmt::print("{:<18} {}\n{:<18} {}\n\n", l.name, labs::claim_text(l, lang), "", labs::source_text(l, lang));
      }
      return 0;
    }
    const labs::Lab& l = labs::find_lab(a->name);
    if ((!a->vectors.empty() || a->query != 0) && a->name != "attention-by-hand") {
      throw std::invalid_argument("--vectors and --query are for the attention-by-hand lab");
    }
    if (svg->count() > 0) {
      if (a->svg.empty()) throw std::invalid_argument("--svg is empty; name a directory");
      if (!l.draws) {
        std::string which;
        for (const auto& other : labs::all_labs())
          if (other.draws) which += (which.empty() ? "" : ", ") + other.name;
        throw std::invalid_argument("the lab " + l.name + " draws no pictures; --svg is for " + which);
      }
      if (!a->vectors.empty()) throw std::invalid_argument("--svg draws the lab's own figures, not --vectors");
    }
    const bool asked = !a->answer.empty() || a->predict;
    if (asked && !l.question) {
      std::string which;
      for (const auto& other : labs::all_labs())
        if (other.question) which += (which.empty() ? "" : ", ") + other.name;
      throw std::invalid_argument("the lab " + l.name + " asks no question; --answer and --predict are for " + which);
    }
    if (answer->count() > 0 && a->answer.find_first_not_of(" \t\r\n") == std::string::npos)
      throw std::invalid_argument("--answer is empty; give your answer, or --reveal to see the figures without one");
    // On a terminal, a lab that answers a self-check question asks for the student's answer first.
    const bool ask = a->predict || (l.question && a->answer.empty() && !a->reveal && !a->json && a->vectors.empty() &&
                                    ::isatty(0) && ::isatty(1));
    std::string given = a->answer;
    if (ask) given = read_answer(l, lang);
    labs::LabResult r = a->vectors.empty() ? l.run() : labs::attention_by_hand(parse_vectors(a->vectors), a->query);
    std::optional<labs::Grade> grade;
    if (!given.empty()) grade = l.question->grade(given, r, lang);
    r.claim = labs::claim_text(l, lang);
    if (!a->vectors.empty()) {
      r.name = l.name;
      r.claim = text::tr("lab.attention-by-hand.claim_vectors", lang);
    }
    const std::vector<std::string> written = a->svg.empty() ? std::vector<std::string>{} : write_pictures(r, a->svg);
    if (a->json) {
      nlohmann::ordered_json j = {{"name", r.name},
                                  {"claim", r.claim},
                                  {"figures", r.figures},
                                  {"holds", r.holds},
                                  {"verdict", r.holds          ? "holds"
                                              : r.inconclusive ? "inconclusive"
                                                               : "does not hold"}};
      if (!written.empty()) j["pictures"] = written;
      if (grade) j["answer"] = {{"given", given}, {"right", grade->right}, {"message", grade->message}};
      std::cout << j.dump(2) << "\n";
    } else {
      // read_answer printed the heading with the question
      if (!ask) fmt::print("{} ({})\n", r.name, labs::source_text(l, lang));
      if (grade) {
        if (!ask)
          fmt::print("{}\n{}\n", text::trf("lab.frame.question", lang, labs::question_text(l, lang)),
                     text::trf("lab.frame.your_answer", lang, given));
        fmt::print("{}\n\n", grade->message);
      }
      fmt::print("{}\n\n", text::trf("lab.frame.claim", lang, r.claim));
      if (lang != Lang::en) fmt::print("  {}\n", text::tr("lab.frame.figures_in_english", lang));
      for (const auto& line : r.lines) fmt::print("  {}\n", line);
      fmt::print("\n{}\n", text::tr(r.holds          ? "lab.frame.holds"
                                    : r.inconclusive ? "lab.frame.inconclusive"
                                                     : "lab.frame.fails",
                                    lang));
      if (a->vectors.empty())
        fmt::print("{}\n", text::trf("lab.frame.try", lang, text::tr("lab." + l.name + ".try", lang)));
      for (const std::string& path : written)
        fmt::print("{}\n", text::trf("lab.frame.picture", lang, text::one_line(path)));
    }
    // 0: the claim holds (and the answer is right); 1: it does not (or the answer is wrong); 3: the lab's
    // measurement could not decide.
    if (grade && !grade->right) return 1;
    return r.holds ? 0 : r.inconclusive ? kInconclusiveExit : 1;
  });
}

}  // namespace seqgrad::cli
