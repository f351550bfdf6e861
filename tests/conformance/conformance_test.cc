// The conformance suite: cases.json holds cases written from the spec texts
// in ../shared/spec/ (each names its source), run through the same
// evaluation as `ctxsel-cli eval`. A case expects either a selection (the
// chosen variant or null for the base function, and optionally scores,
// compatibility and reasons per variant) or an error with its variant,
// line, column and message prefix.
#include <cstdlib>
#include <fstream>
#include <string>

#include "client/cli/eval_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

using nlohmann::json;
using ::testing::StartsWith;

json LoadCases() {
  std::string path = std::string(std::getenv("TEST_SRCDIR")) +
                     "/ctxsel/tests/conformance/cases.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

const json* FindCandidate(const json& output, const std::string& name) {
  for (const json& c : output["candidates"]) {
    if (c["name"] == name) return &c;
  }
  ADD_FAILURE() << "no candidate " << name;
  return nullptr;
}

void CheckSelection(const json& expect, const cli::EvalOutcome& out) {
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  if (expect.contains("selected")) {
    EXPECT_EQ(out.output["selected"], expect["selected"]) << out.text;
  }
  for (const auto& [field, key] : {std::make_pair("scores", "score"),
                                   std::make_pair("compatible", "compatible"),
                                   std::make_pair("reasons", "reason")}) {
    if (!expect.contains(field)) continue;
    for (const auto& [name, value] : expect[field].items()) {
      const json* c = FindCandidate(out.output, name);
      if (c == nullptr) continue;
      EXPECT_EQ((*c)[key], value) << name << "\n" << out.text;
    }
  }
}

void CheckError(const json& expect, const cli::EvalOutcome& out) {
  ASSERT_EQ(out.exit_code, 2) << out.output.dump();
  const json& error = out.output["error"];
  EXPECT_EQ(error["variant"], expect["variant"]);
  EXPECT_EQ(error["line"], expect["line"]);
  EXPECT_EQ(error["column"], expect["column"]) << error["message"];
  EXPECT_THAT(error["message"].get<std::string>(),
              StartsWith(expect["message"].get<std::string>()));
}

TEST(ConformanceTest, EveryCase) {
  json cases = LoadCases();
  EXPECT_GE(cases.size(), 60u);
  for (const json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    cli::EvalOutcome out = cli::EvaluateJson(c["input"]);
    const json& expect = c["expect"];
    if (expect.contains("error")) {
      CheckError(expect["error"], out);
    } else {
      CheckSelection(expect, out);
    }
  }
}

TEST(ConformanceTest, SuiteHasValidAndInvalidCases) {
  int errors = 0, selections = 0;
  for (const json& c : LoadCases()) {
    ++(c["expect"].contains("error") ? errors : selections);
  }
  EXPECT_GE(errors, 25);
  EXPECT_GE(selections, 40);
}

}  // namespace
}  // namespace ctxsel
