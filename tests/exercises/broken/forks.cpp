// The reference tanh, and a child left behind asleep: the checker kills the
// check's whole process group, so nothing outlives it. The child says its pid
// before the checks go on (through a pipe), so that the test can look for it.
#include <unistd.h>

#include <cstdio>

#include "src/exercises/solutions/tanh-backward.cpp"

static const int kForked = [] {
  int said[2];
  if (pipe(said) != 0) return 1;
  if (fork() == 0) {
    std::fprintf(stderr, "forked child %d\n", static_cast<int>(getpid()));
    std::fflush(stderr);
    const char ok = 1;
    if (write(said[1], &ok, 1) != 1) _exit(1);
    sleep(120);
    _exit(0);
  }
  char ok = 0;
  return read(said[0], &ok, 1) == 1 ? 0 : 1;
}();
