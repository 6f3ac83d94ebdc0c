// The CLI as a student meets it: real invocations, exit codes and messages.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_command.h"

using test::run_seqgrad;

TEST_CASE("seqgrad gradcheck --json reports every op passed", "[cli]") {
  const auto r = run_seqgrad("gradcheck --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["passed"] == true);
  CHECK(j["precision"] == "float64");
  REQUIRE(j["ops"].size() >= 40);
  double worst = 0;
  for (const auto& op : j["ops"]) {
    CHECK(op["passed"] == true);
    worst = std::max(worst, op["max_rel_error"].get<double>());
  }
  CHECK(worst <= 1e-6);
  CHECK(j["worst_rel_error"].get<double>() == worst);
}

TEST_CASE("seqgrad gradcheck prints a table with a summary line", "[cli]") {
  const auto r = run_seqgrad("gradcheck");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("layer_norm") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("ops pass; worst relative error") != std::string::npos);
}

TEST_CASE("seqgrad graph writes DOT for both tiny graphs", "[cli]") {
  const auto rnn = run_seqgrad("graph --model rnn --steps 4");
  REQUIRE(rnn.exit_code == 0);
  CHECK(rnn.out.rfind("digraph G {", 0) == 0);
  CHECK(rnn.out.find("h_4 = tanh") != std::string::npos);
  CHECK(rnn.out.find("h_1 = tanh") != std::string::npos);
  const auto att = run_seqgrad("graph --model attention --steps 5");
  REQUIRE(att.exit_code == 0);
  CHECK(att.out.find("attn_weights = softmax | (5, 5)") != std::string::npos);
}

TEST_CASE("wrong input gets one line and exit code 2", "[cli][errors]") {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"", "A subcommand is required"}, Case{"frobnicate", "unknown command 'frobnicate'; the commands are: gradcheck, graph"},
                        Case{"graph --model lstm", "lstm not in {rnn,attention}"}, Case{"graph --steps 0", "--steps"},
                        Case{"graph --steps 99", "--steps"}, Case{"gradcheck --seed -3", "--seed"},
                        Case{"gradcheck --bogus", "--bogus"}}) {
    INFO("seqgrad " << c.args);
    const auto r = run_seqgrad(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(r.err.rfind("seqgrad: ", 0) == 0);
  }
}

TEST_CASE("a file that cannot be written is a run-time failure, exit code 1", "[cli][errors]") {
  const auto r = run_seqgrad("graph --out /nonexistent-dir/g.dot");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "seqgrad: cannot write /nonexistent-dir/g.dot\n");
}
