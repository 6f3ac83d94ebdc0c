// A small generated language for the lm task, written so that long-range
// memory matters: a subject's number (one cat / many cats) decides the form of
// its verb after a relative clause and prepositional phrases that can run for
// dozens of characters ("the cat that the dogs near the old barns chase sleeps .").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seqgrad::tasks {

// About `chars` characters of the language (whole sentences), the same for a given seed.
std::string generate_toy_language(std::size_t chars, std::uint64_t seed);

// The shipped corpus (data/toylang.txt) is generate_toy_language(kToyCorpusChars, kToyCorpusSeed).
constexpr std::size_t kToyCorpusChars = 200000;
constexpr std::uint64_t kToyCorpusSeed = 2017;

// The words whose form shows number, as the grammar writes them: a subject
// noun's two forms, and each verb's (its first word: "is" of "is happy").
struct NumberForms {
  std::string singular, plural;
};
std::vector<NumberForms> toy_nouns();
std::vector<NumberForms> toy_transitive_verbs();
std::vector<NumberForms> toy_verbs();  // the intransitive, then the transitive

}  // namespace seqgrad::tasks
