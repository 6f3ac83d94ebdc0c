// Every lab is a test: its verdict, computed from its figures, must hold.
#include "seqgrad_catch.hpp"

#include "src/labs/lab.h"

using namespace seqgrad;

TEST_CASE("lab two-walls holds", "[labs]") { CHECK(labs::find_lab("two-walls").run().holds); }
TEST_CASE("lab path-length holds", "[labs]") { CHECK(labs::find_lab("path-length").run().holds); }
TEST_CASE("lab no-position holds", "[labs]") { CHECK(labs::find_lab("no-position").run().holds); }
TEST_CASE("lab quadratic-cost holds", "[labs]") {
  const auto r = labs::find_lab("quadratic-cost").run();
  INFO(r.figures.dump());
  CHECK(r.holds);
}
TEST_CASE("lab sqrt-dk holds", "[labs]") { CHECK(labs::find_lab("sqrt-dk").run().holds); }
TEST_CASE("lab pe-shift holds", "[labs]") { CHECK(labs::find_lab("pe-shift").run().holds); }
TEST_CASE("lab rope holds", "[labs]") { CHECK(labs::find_lab("rope").run().holds); }
TEST_CASE("lab qk-asymmetry holds", "[labs]") { CHECK(labs::find_lab("qk-asymmetry").run().holds); }
// Labs that train several models for thousands of steps: seconds here, minutes under ASan (make test-asan skips
// "trained lab").
TEST_CASE("trained lab gates holds", "[labs][training]") { CHECK(labs::find_lab("gates").run().holds); }
TEST_CASE("trained lab multi-head holds", "[labs][training]") { CHECK(labs::find_lab("multi-head").run().holds); }
TEST_CASE("trained lab ffn holds", "[labs][training]") { CHECK(labs::find_lab("ffn").run().holds); }

TEST_CASE("lab attention-by-hand: the chapter's numbers", "[labs]") {
  const labs::LabResult r = labs::find_lab("attention-by-hand").run();
  CHECK(r.holds);
  CHECK(r.name == "attention-by-hand");
  CHECK(r.claim.find("(1, 0.9, 0)") != std::string::npos);
  const auto& w = r.figures["weights"];
  // softmax(1, 0.9, 0) = e^s / (e + e^0.9 + 1)
  const double z = std::exp(1.0) + std::exp(0.9) + 1;
  CHECK(w[0].get<double>() == Approx(std::exp(1.0) / z).epsilon(1e-5));
  CHECK(w[2].get<double>() == Approx(1 / z).epsilon(1e-5));
  CHECK(r.figures["new_vector"][0].get<double>() == Approx((std::exp(1.0) + 0.9 * std::exp(0.9)) / z).epsilon(1e-5));
}

TEST_CASE("attention by hand takes the user's vectors, and a verdict can come out false", "[labs]") {
  const labs::LabResult r = labs::attention_by_hand({{0, 1}, {1, 0}, {0, 2}}, 0);
  CHECK(r.holds);                              // the order rule holds for any vectors
  CHECK(r.figures["largest_weight_on"] == 2);  // (0, 2) is the most similar to (0, 1) by dot product
  CHECK_THROWS_WITH(labs::attention_by_hand({{1, 0}, {1}}, 0), Catch::Contains("same, non-zero length"));
  CHECK_THROWS_WITH(labs::find_lab("nope"), Catch::StartsWith("unknown lab 'nope'; the labs are: two-walls"));
}
