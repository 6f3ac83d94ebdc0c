#include "src/tasks/toy_language.h"

#include <array>
#include <vector>

#include "autograd/rng.h"

namespace seqgrad::tasks {

namespace {

struct Word {
  const char* singular;
  const char* plural;
};

// Nouns and verbs come in a singular and a plural form; the grammar makes each
// verb agree with its own subject.
constexpr std::array<Word, 10> kNouns{{{"cat", "cats"},
                                       {"dog", "dogs"},
                                       {"bird", "birds"},
                                       {"child", "children"},
                                       {"fox", "foxes"},
                                       {"king", "kings"},
                                       {"girl", "girls"},
                                       {"wolf", "wolves"},
                                       {"mouse", "mice"},
                                       {"man", "men"}}};
constexpr std::array<Word, 8> kIntransitive{{{"sleeps", "sleep"},
                                             {"runs", "run"},
                                             {"sings", "sing"},
                                             {"waits", "wait"},
                                             {"is happy", "are happy"},
                                             {"was here", "were here"},
                                             {"hides", "hide"},
                                             {"laughs", "laugh"}}};
constexpr std::array<Word, 6> kTransitive{{{"chases", "chase"},
                                           {"sees", "see"},
                                           {"likes", "like"},
                                           {"follows", "follow"},
                                           {"fears", "fear"},
                                           {"knows", "know"}}};
constexpr std::array<const char*, 8> kAdjectives{"old", "small", "red", "quiet", "brave", "tired", "green", "happy"};
constexpr std::array<const char*, 5> kPrepositions{"near", "behind", "with", "under", "beside"};
constexpr std::array<Word, 5> kPlaces{
    {{"house", "houses"}, {"tree", "trees"}, {"barn", "barns"}, {"river", "rivers"}, {"hill", "hills"}}};

class Writer {
 public:
  explicit Writer(std::uint64_t seed) : rng_(seed) {}

  // the [adjective] noun, in the number asked for
  void noun_phrase(bool plural, const Word& noun) {
    out_ += plural && rng_.uniform() < 0.3 ? "some " : "the ";
    if (rng_.uniform() < 0.4) out_ += std::string(pick(kAdjectives)) + " ";
    out_ += plural ? noun.plural : noun.singular;
  }

  // A sentence whose main verb is far from its subject as often as not.
  void sentence() {
    const bool plural = rng_.uniform() < 0.5;
    noun_phrase(plural, pick(kNouns));
    const int extras = rng_.randint(0, 3);  // 0, 1 or 2 insertions
    for (int i = 0; i < extras; ++i) {
      if (rng_.uniform() < 0.5) {
        // object relative clause, with its own subject of either number
        const bool inner = rng_.uniform() < 0.5;
        out_ += " that ";
        noun_phrase(inner, pick(kNouns));
        out_ += " ";
        out_ += form(pick(kTransitive), inner);
      } else {
        out_ += " ";
        out_ += pick(kPrepositions);
        out_ += " ";
        const auto& place = pick(kPlaces);  // drawn before its number, as below
        noun_phrase(rng_.uniform() < 0.5, place);
      }
    }
    out_ += " ";
    if (rng_.uniform() < 0.5) {
      out_ += form(pick(kIntransitive), plural);
    } else {
      out_ += form(pick(kTransitive), plural);
      out_ += " ";
      // The noun is drawn before its number, each in a statement of its own: as
      // two arguments of one call their order would be the compiler's choice
      // (GCC on x86-64 evaluated the second first, and wrote data/toylang.txt so).
      const auto& object = pick(kNouns);
      noun_phrase(rng_.uniform() < 0.5, object);
    }
    out_ += " .";
  }

  std::string text(std::size_t chars) {
    while (out_.size() < chars) {
      sentence();
      out_ += rng_.uniform() < 0.2 ? "\n" : " ";
    }
    if (!out_.empty() && out_.back() == ' ') out_.back() = '\n';
    return out_;
  }

 private:
  template <class A>
  const typename A::value_type& pick(const A& options) {
    return options[static_cast<std::size_t>(rng_.randint(0, static_cast<int>(options.size())))];
  }
  static const char* form(const Word& w, bool plural) { return plural ? w.plural : w.singular; }

  ag::Rng rng_;
  std::string out_;
};

}  // namespace

std::string generate_toy_language(std::size_t chars, std::uint64_t seed) { return Writer(seed).text(chars); }

namespace {
std::vector<NumberForms> first_words(const Word* begin, const Word* end) {
  std::vector<NumberForms> out;
  for (const Word* w = begin; w != end; ++w) {
    const std::string one = w->singular, many = w->plural;
    out.push_back({one.substr(0, one.find(' ')), many.substr(0, many.find(' '))});
  }
  return out;
}
}  // namespace

std::vector<NumberForms> toy_nouns() { return first_words(kNouns.begin(), kNouns.end()); }
std::vector<NumberForms> toy_transitive_verbs() { return first_words(kTransitive.begin(), kTransitive.end()); }
std::vector<NumberForms> toy_verbs() {
  std::vector<NumberForms> out = first_words(kIntransitive.begin(), kIntransitive.end());
  const std::vector<NumberForms> transitive = toy_transitive_verbs();
  out.insert(out.end(), transitive.begin(), transitive.end());
  return out;
}

}  // namespace seqgrad::tasks
