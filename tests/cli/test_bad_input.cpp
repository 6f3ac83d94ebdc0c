// Every wrong input a student might type, run through the real binary: one
// clear line on stderr, exit code 2 for a usage error and 1 for a failure at
// run time, and never a crash, a hang or a stack trace.
#include <algorithm>

#include "seqgrad_catch.hpp"

#include "bad_input_cases.h"

using test::run_seqgrad;
using test::bad_input::Case;

TEST_CASE("bad input: one clear line and the right exit code, for each of the 176 invocations in its table",
          "[cli][errors]") {
  const std::vector<Case> cases = test::bad_input::cases();
  int crashes = 0;
  for (const Case& c : cases) {
    INFO("seqgrad " << c.args << "\n  stderr: " << [&] { return run_seqgrad(c.args).err; }());
    const auto r = run_seqgrad(c.args);
    CHECK(r.exit_code == c.code);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(r.err.rfind("seqgrad: ", 0) == 0);  // one line, in one voice
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("terminate") == std::string::npos);
    crashes += r.exit_code > 2;
  }
  CHECK(crashes == 0);
  CHECK(cases.size() == 176);  // the count in this test's name
}
