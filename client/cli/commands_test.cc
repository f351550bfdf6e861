#include "client/cli/commands.h"

#include <set>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "client/cli/arguments.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::set<std::string> FlagsInText(absl::string_view text) {
  const std::vector<std::string> flags = FlagsIn(text);
  return {flags.begin(), flags.end()};
}

TEST(CommandsTest, NamesAreUniqueAndEveryUsageLineStartsWithTheName) {
  std::set<std::string> names;
  for (const Command* command : AllCommands()) {
    EXPECT_TRUE(names.insert(command->name).second) << command->name;
    EXPECT_NE(std::string(command->summary), "") << command->name;
    for (absl::string_view line : absl::StrSplit(command->usage, '\n')) {
      EXPECT_THAT(std::string(line), StartsWith(std::string(command->name)));
    }
  }
  EXPECT_EQ(names.size(), 16u);
}

TEST(CommandsTest, UsageLinesNameOnlyRealFlags) {
  for (const Command* command : AllCommands()) {
    for (const std::string& flag : FlagsOf(*command)) {
      EXPECT_NE(absl::FindCommandLineFlag(flag), nullptr)
          << command->name << " shows --" << flag << ", which is not a flag";
    }
  }
}

TEST(CommandsTest, HelpShowsEveryFlagTheCliDefines) {
  const std::set<std::string> shown = FlagsInText(HelpText());
  int cli_flags = 0;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!absl::StrContains(flag->Filename(), "client/cli/")) continue;
    ++cli_flags;
    EXPECT_EQ(shown.count(std::string(name)), 1u)
        << "--" << name << " (" << flag->Filename() << ") is not in help";
  }
  EXPECT_GT(cli_flags, 20);
}

TEST(CommandsTest, HelpListsUsageLinesAndSummaries) {
  const std::string help = HelpText();
  EXPECT_THAT(help, StartsWith("usage: ctxsel-cli [--server=host:port]"));
  EXPECT_THAT(help, HasSubstr("$CTXSEL_SERVER, else 127.0.0.1:7070"));
  EXPECT_THAT(help, HasSubstr("[--timeout=5s]"));
  EXPECT_THAT(help, HasSubstr("\n  archs [--json] [NAME]\n    The SYCL"));
  EXPECT_THAT(help, HasSubstr("\n  variants get KERNEL NAME [--json]\n"));
  EXPECT_THAT(help, HasSubstr("\n  select --kernel=K [--construct=C,...]"));
  EXPECT_THAT(help, HasSubstr("\nexit codes (what the caller should do):\n"
                              "  0  placed"));
  EXPECT_THAT(help, HasSubstr("\n  5  credentials or TLS rejected"));
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    EXPECT_LE(line.size(), 79u) << line;
  }
}

TEST(CommandsTest, UsageTextPrefixesEveryForm) {
  EXPECT_EQ(UsageText(kArchsCommand),
            "usage: ctxsel-cli archs [--json] [NAME]\n");
  EXPECT_THAT(UsageText(kVariantsCommand),
              HasSubstr("\n       ctxsel-cli variants ls [KERNEL] [--json]\n"));
}

}  // namespace
}  // namespace ctxsel::cli
