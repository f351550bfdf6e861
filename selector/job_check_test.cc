#include "selector/job_check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::selector {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct NameCase {
  const char* name;
  bool ok;
  const char* message;  // a substring of the error
};

TEST(JobCheckTest, ConstructNames) {
  const NameCase cases[] = {
      {"target", true, ""},
      {"do", true, ""},
      {"distribute", true, ""},
      {"task", true, ""},
      {"paralel", false,
       "'paralel' is not an OpenMP construct; did you mean 'parallel'?"},
      {"tget", false, "did you mean 'target'?"},
      {" teams", false, "did you mean 'teams'?"},
      {"Target", false, "did you mean 'target'?"},
      {"banana", false, "(one of target, teams"},
      {"", false, "empty construct name"},
  };
  for (const NameCase& c : cases) {
    absl::Status s = CheckConstructName(c.name);
    EXPECT_EQ(s.ok(), c.ok) << c.name;
    if (!c.ok) {
      EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.name;
    }
  }
}

TEST(JobCheckTest, RequirementsAndMemoryOrders) {
  EXPECT_TRUE(CheckRequirement("unified_shared_memory").ok());
  EXPECT_THAT(CheckRequirement("unified_shared_mem").message(),
              HasSubstr("'unified_shared_mem' is not a requires clause; did "
                        "you mean 'unified_shared_memory'?"));
  EXPECT_TRUE(CheckMemoryOrder("seq_cst").ok());
  EXPECT_THAT(CheckMemoryOrder("seqcst").message(),
              HasSubstr("did you mean 'seq_cst'?"));
  EXPECT_THAT(CheckMemoryOrder("whatever").message(),
              HasSubstr("(one of seq_cst, acq_rel"));
}

TEST(JobCheckTest, VariablesMustBeGiven) {
  EXPECT_TRUE(CheckVariablesGiven({"N"}, {{"N", 1}, {"extra", 2}}).ok());
  EXPECT_TRUE(CheckVariablesGiven({}, {}).ok());
  absl::Status missing = CheckVariablesGiven({"M", "N"}, {});
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("missing M, N"));
  EXPECT_THAT(CheckVariablesGiven({"N"}, {{"n", 4096}}).message(),
              HasSubstr("missing N ('n' was given: variable names are "
                        "case-sensitive)"));
}

TEST(JobCheckTest, SelectorVariablesAreTheOnesItsExpressionsRead) {
  auto s = Selector::Parse(
      "target_device={device_num(dev)}, user={condition(N > 32 && M < N)}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->variables(), ElementsAre("M", "N", "dev"));
  auto fixed = Selector::Parse("user={condition(1 < 2)}");
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(fixed->variables().empty());
}

}  // namespace
}  // namespace ctxsel::selector
