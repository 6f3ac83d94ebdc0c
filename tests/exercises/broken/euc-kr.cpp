// The reference tanh, with a comment in EUC-KR (ÇÑ±Û, "Korean") and its bytes written to both
// outputs, with lines that look like the checker's own: a clear verdict, the bytes replaced.
#include <cstdio>

#include "src/exercises/solutions/tanh-backward.cpp"

static const int kPrinted = [] {
  std::fputs("\xc7\xd1\xb1\xdb\n{\"event\":1}\n{\"event\":\"fail\",\"check\":7}\n", stdout);
  std::fputs("\xc7\xd1\xb1\xdb on stderr\n", stderr);
  return 0;
}();
