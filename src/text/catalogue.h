// The one message catalogue: every sentence seqgrad can say in more than one
// language (the exercises' statements, checks, hints and verdicts), English
// and Korean side by side, looked up by a short id.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace seqgrad::text {

enum class Lang { en, ko };

// "en" or "ko" (also "ko_KR.UTF-8" and the like); nothing for anything else.
std::optional<Lang> parse_lang(std::string_view name);
// Korean when LC_ALL, LC_MESSAGES or LANG (the first one set, as gettext reads
// them) starts with "ko" and names no codeset or UTF-8 (ko_KR.EUC-KR cannot
// show what seqgrad writes: it gets English); English otherwise.
Lang lang_from_environment();
std::string_view to_string(Lang lang);

// The language this process speaks: set once by the command line (--lang, or
// the environment's) and by the page for each request; until then, the
// environment's. Every floor's messages read it, so an error thrown deep in a
// task or a checkpoint reader comes out in the student's language.
Lang lang();
void set_lang(Lang lang);

// The message `id` in `lang`. An id the catalogue lacks is a bug of the
// program: std::logic_error naming it.
std::string_view tr(std::string_view id, Lang lang);
bool has(std::string_view id);

// A Korean particle after a filled field depends on how the field is read:
// "{}[이고/고]" becomes "3이고" but "5고", "{}[을/를]" "파일을" but "rnn을" and
// "gru를". Each "[A/B]" takes A after a final consonant, B otherwise (and for
// [으로/로], B after ㄹ too), judged from the character before it: a Hangul
// syllable, a digit as Korean reads it (영 일 이 삼 사 오 육 칠 팔 구), a Latin
// letter by its Korean name (엘 엠 엔 알 end in a consonant); closing brackets
// and quotes are looked through.
std::string korean_particles(std::string_view s);

namespace detail {
// A field's '[' while a Korean message's particles are chosen (U+E000, private use): the rule reads the catalogue's
// own markers, never a marker-like text inside a field (a path "말뭉치[을/를]x.txt", a token, a student's answer).
inline constexpr std::string_view kFieldBracket = "\xEE\x80\x80";
std::string shield(std::string_view field);
std::string unshield(std::string_view s);
template <class T>
decltype(auto) shielded(T&& value) {
  if constexpr (std::is_convertible_v<const std::remove_cvref_t<T>&, std::string_view>)
    return shield(std::string_view(value));
  else
    return std::forward<T>(value);
}
}  // namespace detail

// The message with its {} fields filled, as fmt::format does (and, in Korean,
// its particles chosen: the catalogue's markers only, never a field's text).
template <class... Args>
std::string trf(std::string_view id, Lang lang, Args&&... args) {
  if (lang != Lang::ko) return fmt::format(fmt::runtime(tr(id, lang)), std::forward<Args>(args)...);
  return detail::unshield(
      korean_particles(fmt::format(fmt::runtime(tr(id, lang)), detail::shielded(std::forward<Args>(args))...)));
}

// The message `id` in the process's language (lang()), its fields filled.
template <class... Args>
std::string msg(std::string_view id, Args&&... args) {
  return trf(id, lang(), std::forward<Args>(args)...);
}

// The length of the UTF-8 character at s[i], or 0 when the bytes there are not
// one (malformed, overlong, a surrogate, past U+10FFFF).
std::size_t utf8_char_at(std::string_view s, std::size_t i);

// What seqgrad echoes (a path in a message or a report line) on one line: a
// control character or a byte that is not UTF-8 is written as \n, \t or \xHH,
// so that a name with a newline in it cannot print a second line (a forged
// "seqgrad: ...").
std::string one_line(std::string_view s);

// Every id, for the test that each has both languages and that the fields of
// the two agree.
struct Entry {
  std::string_view id, en, ko;
};
std::span<const Entry> entries();

}  // namespace seqgrad::text
