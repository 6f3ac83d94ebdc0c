// The reference tanh, and a program that prints without end before any check
// starts: stopped at the output limit, well before the time limit.
#include <cstdio>

#include "src/exercises/solutions/tanh-backward.cpp"

static const int kFlood = [] {
  for (;;) std::fputs("spam spam spam spam spam spam spam spam spam spam spam spam\n", stdout);
  return 0;
}();
