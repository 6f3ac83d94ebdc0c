// seqgrad lab: the chapter's claims, each run as an experiment with a computed verdict.
#include <fmt/core.h>
#include <unistd.h>
#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
      if (!x) throw std::invalid_argument(text::msg("labs.cli.vectors_not_number", part, word));
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
      if (!std::isfinite(dot)) throw std::invalid_argument(text::msg("labs.cli.vectors_too_large"));
    }
  return out;
}

// Each picture as DIR/FILE, written whole; the paths written.
std::vector<std::string> write_pictures(const labs::LabResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw std::runtime_error(
        text::msg("labs.cli.svg_mkdir", dir, ec ? ec.message() : text::msg("labs.cli.svg_file_there")));
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
    if (!std::getline(std::cin, line)) throw std::invalid_argument(text::msg("labs.cli.no_answer"));
    if (!::isatty(0)) fmt::print("{}\n", line);  // typed on a terminal, it is on the screen already
    if (line.find_first_not_of(" \t\r") == std::string::npos) return "";
    try {
      if (lab.question->check) lab.question->check(line);
      return line;
    } catch (const std::invalid_argument& e) {
      fmt::print("{}\n", e.what());
    }
  }
}

// --seed S: a whole number, at most 18 digits.
std::uint64_t parse_seed(const std::string& text, const std::string& option) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument(text::msg("labs.cli.not_a_seed", option, text));
  if (text.size() > 18) throw std::invalid_argument(text::msg("labs.cli.seed_too_large", option, text));
  return std::stoull(text);
}

// --seeds A-B (or one seed A): the seeds from A to B, at most 100 of them.
std::vector<std::uint64_t> parse_seed_range(const std::string& text) {
  // A part that is empty ("-1-3", "0-") is no seed: the whole of what was given is quoted.
  const auto part = [&](const std::string& p) { return parse_seed(p.empty() ? text : p, "--seeds"); };
  const std::size_t dash = text.find('-');
  const std::uint64_t first = part(text.substr(0, dash));
  const std::uint64_t last = dash == std::string::npos ? first : part(text.substr(dash + 1));
  if (last < first) throw std::invalid_argument(text::msg("labs.cli.seeds_backwards", text));
  if (last - first >= 100) throw std::invalid_argument(text::msg("labs.cli.seeds_too_many", text, last - first + 1));
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t s = first; s <= last; ++s) seeds.push_back(s);
  return seeds;
}

// "seed 5, 600 steps": the seeds and steps of a run, in `lang`; empty for none.
std::string trial_text(const std::vector<std::uint64_t>& seeds, int steps, Lang lang) {
  std::string out = seeds.empty() ? "" : labs::seeds_text(seeds, lang);
  if (steps > 0) out += (out.empty() ? "" : ", ") + text::trf("lab.frame.steps", lang, steps);
  return out;
}

const char* verdict_id(labs::Verdict v) {
  return v == labs::Verdict::holds   ? "lab.frame.holds"
         : v == labs::Verdict::fails ? "lab.frame.fails"
                                     : "lab.frame.inconclusive";
}

const char* verdict_word(labs::Verdict v) {
  return v == labs::Verdict::holds ? "holds" : v == labs::Verdict::fails ? "does not hold" : "inconclusive";
}

// The lab run, and its result kept in `path` for run_lab.
labs::LabResult fresh(const labs::Lab& l, const labs::Trial& trial, const char* dir,
                      const std::filesystem::path& path) {
  labs::LabResult r = l.run(trial);
  nlohmann::ordered_json j = {{"name", r.name},
                              {"claim", r.claim},
                              {"figures", r.figures},
                              {"lines", r.lines},
                              {"lines_ko", r.lines_ko},
                              {"holds", r.holds},
                              {"inconclusive", r.inconclusive},
                              {"conditions", labs::conditions_to_json(r.conditions)},
                              {"pictures", nlohmann::json::array()}};
  for (const auto& p : r.pictures) j["pictures"].push_back({{"file", p.file}, {"svg", p.svg}});
  std::filesystem::create_directories(dir);
  io::write_file(path.string(), j.dump());
  return r;
}

// The lab's experiment on `trial`. With SEQGRAD_LAB_CACHE=DIR in the environment (the guides' test sets it), a
// result is kept in DIR and the same lab on the same trial reads it back instead of running again: the Korean guide
// then shows the figures of the English guide's run, in Korean, without training every lab twice. The figure lines
// are kept in both languages (lines and lines_ko), so nothing shown depends on which language ran first; a file
// kept before the lines had a Korean copy is run again.
labs::LabResult run_lab(const labs::Lab& l, const labs::Trial& trial) {
  const char* dir = std::getenv("SEQGRAD_LAB_CACHE");
  if (!dir || !*dir) return l.run(trial);
  std::string key = l.name;
  for (std::uint64_t s : trial.seeds) key += "-s" + std::to_string(s);
  if (trial.steps) key += "-n" + std::to_string(*trial.steps);
  const std::filesystem::path path = std::filesystem::path(dir) / (key + ".json");
  if (std::ifstream in(path); in) {
    const auto j = nlohmann::json::parse(in);
    if (!j.contains("lines_ko") || !j.contains("conditions")) return fresh(l, trial, dir, path);
    labs::LabResult r;
    r.name = j.at("name");
    r.claim = j.at("claim");
    r.figures = j.at("figures");
    r.lines = j.at("lines").get<std::vector<std::string>>();
    r.lines_ko = j.at("lines_ko").get<std::vector<std::string>>();
    r.holds = j.at("holds");
    r.inconclusive = j.at("inconclusive");
    r.conditions = labs::conditions_from_json(j.at("conditions"));
    for (const auto& p : j.at("pictures")) r.pictures.push_back({p.at("file"), p.at("svg")});
    return r;
  }
  return fresh(l, trial, dir, path);
}

// `seqgrad lab NAME --seeds A-B`: the lab on each seed alone, each run's figures as it ends, then how many hold.
// 0 when the claim holds on every seed, 1 when on none, 3 when the seeds split.
int run_on_seeds(const labs::Lab& l, const std::vector<std::uint64_t>& seeds, std::optional<int> steps, bool json,
                 Lang lang) {
  std::vector<labs::LabResult> runs;
  nlohmann::ordered_json j = {
      {"name", l.name}, {"claim", labs::claim_text(l, lang, steps)}, {"runs", nlohmann::json::array()}};
  if (!json) {
    fmt::print("{} ({})\n{}\n\n", l.name, labs::source_text(l, lang),
               text::trf("lab.frame.claim", lang, labs::claim_text(l, lang, steps)));
  }
  for (std::uint64_t seed : seeds) {
    const labs::Trial trial{{seed}, steps};
    runs.push_back(run_lab(l, trial));
    const labs::Verdict v = labs::verdict_of(runs.back());
    const std::string which = text::trf("lab.frame.seed", lang, seed);
    if (json) {
      j["runs"].push_back({{"seed", seed},
                           {"figures", runs.back().figures},
                           {"holds", runs.back().holds},
                           {"verdict", verdict_word(v)},
                           {"conditions", labs::conditions_json(runs.back(), lang)}});
      continue;
    }
    fmt::print("{}:\n", which);
    for (const auto& line : runs.back().lines_in(lang)) fmt::print("  {}\n", line);
    for (const auto& line : labs::condition_lines(runs.back(), lang)) fmt::print("  {}\n", line);
    fmt::print("  {}\n\n", text::trf("lab.frame.seed_verdict", lang, which, labs::verdict_line(runs.back(), lang)));
    std::fflush(stdout);
  }
  const labs::Verdict over = labs::verdict_over(runs);
  const auto held = std::count_if(runs.begin(), runs.end(), [](const labs::LabResult& r) { return r.holds; });
  const std::string range = labs::seeds_text(seeds);
  if (json) {
    j["holds_on"] = held;
    j["of"] = runs.size();
    j["holds"] = over == labs::Verdict::holds;
    j["verdict"] = verdict_word(over);
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("{}\n", text::trf("lab.frame.tally", lang, held, runs.size(), range.substr(range.find(' ') + 1)));
    const bool split = over == labs::Verdict::inconclusive && held > 0;
    fmt::print("{}\n", text::tr(split ? "lab.frame.split" : verdict_id(over), lang));
    fmt::print("{}\n", text::trf("lab.frame.try", lang, text::tr("lab." + l.name + ".try", lang)));
  }
  return over == labs::Verdict::holds ? 0 : over == labs::Verdict::fails ? 1 : kInconclusiveExit;
}

}  // namespace

void add_lab_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    std::string name, vectors, answer, lang, svg, seed, seeds;
    int query = 0, steps = 0;
    bool list = false, json = false, predict = false, reveal = false;
  };
  auto a = std::make_shared<Args>();
  auto* lab = app.add_subcommand("lab", text::msg("labs.cli.help"));
  lab->add_option("name", a->name, text::msg("labs.cli.help.name"));
  lab->add_flag("--list", a->list, text::msg("labs.cli.help.list"));
  lab->add_flag("--json", a->json, text::msg("labs.cli.help.json"));
  auto* vectors = lab->add_option("--vectors", a->vectors, text::msg("labs.cli.help.vectors"));
  lab->add_option("--query", a->query, text::msg("labs.cli.help.query"))->capture_default_str()->needs(vectors);
  auto* answer = lab->add_option("--answer", a->answer, text::msg("labs.cli.help.answer"));
  auto* predict = lab->add_flag("--predict", a->predict, text::msg("labs.cli.help.predict"));
  auto* reveal = lab->add_flag("--reveal", a->reveal, text::msg("labs.cli.help.reveal"));
  auto* svg = lab->add_option("--svg", a->svg, text::msg("labs.cli.help.svg"));
  auto* seed = lab->add_option("--seed", a->seed, text::msg("labs.cli.help.seed"));
  auto* seeds = lab->add_option("--seeds", a->seeds, text::msg("labs.cli.help.seeds"));
  auto* steps = lab->add_option("--steps", a->steps, text::msg("labs.cli.help.steps"));
  add_lang_option(lab, a->lang, text::msg("labs.cli.help.lang"));
  answer->excludes(predict)->excludes(reveal)->excludes(vectors);
  predict->excludes(reveal)->excludes(vectors);
  seed->excludes(seeds)->excludes(vectors);
  seeds->excludes(vectors)->excludes(answer)->excludes(predict)->excludes(svg);
  steps->excludes(vectors);
  commands.emplace_back(lab, [a, vectors, svg, answer, seed, seeds, steps] {
    const Lang lang = chosen_lang(a->lang);
    text::set_lang(lang);  // the refusals below, and the labs', in the language chosen
    if (vectors->count() > 0 && a->vectors.find_first_not_of(" \t") == std::string::npos) {
      throw std::invalid_argument(text::msg("labs.cli.vectors_empty"));
    }
    if (a->list || a->name.empty()) {
      if (a->name.empty() && !a->list) throw std::invalid_argument(text::msg("labs.cli.name_a_lab"));
      if (a->json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& l : labs::all_labs())
          j.push_back({{"name", l.name},
                       {"source", labs::source_text(l, lang)},
                       {"claim", labs::claim_text(l, lang)},
                       {"seconds", l.seconds},
                       {"seeds", l.seeds},
                       {"steps", l.steps}});
        std::cout << j.dump(2) << "\n";
      } else {
        for (const auto& l : labs::all_labs()) {
          const std::string takes = l.seconds < 1 ? std::string(text::tr("lab.frame.list_instant", lang))
                                                  : text::trf("lab.frame.list_seconds", lang, std::lround(l.seconds));
          fmt::print("{:<18} {}\n{:<18} {} ({})\n\n", l.name, labs::claim_text(l, lang), "", labs::source_text(l, lang),
                     takes);
        }
      }
      return 0;
    }
    const labs::Lab& l = labs::find_lab(a->name);
    if ((!a->vectors.empty() || a->query != 0) && a->name != "attention-by-hand") {
      throw std::invalid_argument(text::msg("labs.cli.vectors_for_by_hand"));
    }
    if (svg->count() > 0) {
      if (a->svg.empty()) throw std::invalid_argument(text::msg("labs.cli.svg_empty"));
      if (!l.draws) {
        std::string which;
        for (const auto& other : labs::all_labs())
          if (other.draws) which += (which.empty() ? "" : ", ") + other.name;
        throw std::invalid_argument(text::msg("labs.cli.no_pictures", l.name, which));
      }
      if (!a->vectors.empty()) throw std::invalid_argument(text::msg("labs.cli.svg_not_vectors"));
    }
    labs::Trial trial;
    if (seed->count() > 0) trial.seeds = {parse_seed(a->seed, "--seed")};
    if (steps->count() > 0) trial.steps = a->steps;
    if (seeds->count() > 0) {
      trial.seeds = parse_seed_range(a->seeds);
      l.check(trial);  // refused before the first run, not after some seeds
      // A claim over seeds is judged once on them all; any other on each seed alone.
      if (!l.over_seeds) return run_on_seeds(l, trial.seeds, trial.steps, a->json, lang);
    }
    const bool asked = !a->answer.empty() || a->predict;
    if (asked && !l.question) {
      std::string which;
      for (const auto& other : labs::all_labs())
        if (other.question) which += (which.empty() ? "" : ", ") + other.name;
      throw std::invalid_argument(text::msg("labs.cli.no_question", l.name, which));
    }
    if (answer->count() > 0 && a->answer.find_first_not_of(" \t\r\n") == std::string::npos)
      throw std::invalid_argument(text::msg("labs.cli.answer_empty"));
    if (!a->answer.empty() && l.question->check) l.question->check(a->answer);  // its form, before the lab runs
    // On a terminal, a lab that answers a self-check question asks for the student's answer first.
    const bool ask = a->predict || (l.question && a->answer.empty() && !a->reveal && !a->json && a->vectors.empty() &&
                                    ::isatty(0) && ::isatty(1));
    std::string given = a->answer;
    if (ask) given = read_answer(l, lang);
    labs::LabResult r =
        a->vectors.empty() ? run_lab(l, trial) : labs::attention_by_hand(parse_vectors(a->vectors), a->query);
    std::optional<labs::Grade> grade;
    if (!given.empty()) grade = l.question->grade(given, r, lang);
    r.claim = labs::claim_text(l, lang, trial.steps);
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
                                  {"verdict", verdict_word(labs::verdict_of(r))},
                                  {"conditions", labs::conditions_json(r, lang)}};
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
      const std::string changed = trial_text(trial.seeds, trial.steps.value_or(0), lang);
      if (!changed.empty())
        fmt::print("{}\n\n", text::trf("lab.frame.trial", lang, changed, trial_text(l.seeds, l.steps, lang)));
      if (trial.steps) fmt::print("{}\n\n", text::tr("lab.frame.schedule", lang));
      for (const auto& line : r.lines_in(lang)) fmt::print("  {}\n", line);
      fmt::print("\n{}\n", text::tr("lab.frame.conditions", lang));
      for (const auto& line : labs::condition_lines(r, lang)) fmt::print("  {}\n", line);
      fmt::print("{}\n", labs::verdict_line(r, lang));
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
