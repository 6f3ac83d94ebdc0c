// A tanh whose backward is wrong (the local derivative alone, without dy) and
// that lies about it: it replaces the fputs the checks write their events
// with, so that a "fail" event reads as a pass, and at exit it prints the old
// protocol's pass lines for every check on standard output.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/exercises/exercise.h"

extern "C" int fputs(const char* s, FILE* f) {
  std::string line(s);
  const auto at = line.find("\"check\":\"");
  if (line.find("\"event\":\"fail\"") != std::string::npos && at != std::string::npos) {
    const std::string id = line.substr(at + 9, line.find('"', at + 9) - at - 9);
    line = "{\"event\":\"pass\",\"check\":\"" + id + "\"}\n";
  }
  return write(fileno(f), line.data(), line.size()) < 0 ? EOF : 1;
}

namespace {
void claim_every_pass() {
  for (const char* id : {"forward", "large-inputs", "one-op", "backward", "composed", "no-gradient"})
    std::printf("{\"event\":\"pass\",\"check\":\"%s\"}\n", id);
  std::printf("{\"event\":\"done\"}\n");
}
const int registered = std::atexit(claim_every_pass);
}  // namespace

namespace exercise {

Tensor tanh_op(const Tensor& x) {
  Tensor y = Tensor::make_result("tanh_op", x.shape(), {&x});
  for (std::size_t i = 0; i < x.numel(); ++i) y.data()[i] = std::tanh(x.data()[i]);
  if (y.records())
    y.set_backward([xn = x.node(), yn = y.node()] {
      Scalar* dx = ag::grad_into(*xn);
      if (!dx) return;
      for (std::size_t i = 0; i < yn->data.size(); ++i) dx[i] = 1 - yn->data[i] * yn->data[i];
    });
  return y;
}

}  // namespace exercise
