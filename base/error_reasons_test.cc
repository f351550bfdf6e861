#include "base/error_reasons.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

// A reason says more than its code: never the code's own name, which is
// what status_details' defensive default sends.
TEST(ErrorReasonsTest, NamesAreUniqueAndNeverACodesName) {
  std::set<std::string> names;
  for (const ErrorReason& reason : ErrorReasons()) {
    EXPECT_TRUE(names.insert(reason.name).second) << reason.name;
    EXPECT_NE(absl::StatusCodeToString(reason.code), reason.name);
    EXPECT_NE(reason.code, absl::StatusCode::kOk) << reason.name;
    EXPECT_NE(std::string(reason.meaning), "") << reason.name;
  }
  EXPECT_GT(names.size(), 10u);
}

TEST(ErrorReasonsTest, FindsByName) {
  ASSERT_NE(FindErrorReason(kReasonClaimsExhausted), nullptr);
  EXPECT_EQ(FindErrorReason(kReasonClaimsExhausted)->code,
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(kReasonRateLimited), "RATE_LIMITED");
  EXPECT_EQ(FindErrorReason("RESOURCE_EXHAUSTED"), nullptr);
}

// docs/api.md's reason table: "| `NAME` | CODE | metadata | meaning |".
std::map<std::string, std::string> DocumentedReasons() {
  std::ifstream in("docs/api.md");
  EXPECT_TRUE(in.good()) << "docs/api.md";
  std::map<std::string, std::string> out;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (absl::StartsWith(line, "| reason | code |")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!absl::StartsWith(line, "|")) break;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 4 || absl::StartsWith(cells[1], " ---")) continue;
    std::string name(absl::StripAsciiWhitespace(cells[1]));
    name = std::string(absl::StripSuffix(absl::StripPrefix(name, "`"), "`"));
    out[name] = std::string(absl::StripAsciiWhitespace(cells[2]));
  }
  return out;
}

TEST(ErrorReasonsTest, DocsListEveryReasonWithItsCodeAndNoOther) {
  std::map<std::string, std::string> documented = DocumentedReasons();
  std::map<std::string, std::string> table;
  for (const ErrorReason& reason : ErrorReasons()) {
    table[reason.name] = absl::StatusCodeToString(reason.code);
  }
  EXPECT_EQ(documented, table)
      << "docs/api.md's reason table and base/error_reasons.def differ";
}

}  // namespace
}  // namespace ctxsel
