#include "client/cli/arguments.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "client/cli/common_flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Arguments> Parse(std::vector<const char*> words) {
  words.insert(words.begin(), "ctxsel-cli");
  return ParseArguments(static_cast<int>(words.size()), words.data());
}

class ArgumentsTest : public ::testing::Test {
  absl::FlagSaver saver_;  // each test starts from the defaults
};

TEST_F(ArgumentsTest, GlobalFlagsBeforeTheCommandAndCommandFlagsAfter) {
  absl::StatusOr<Arguments> args =
      Parse({"--server", "h:1", "select", "--kernel=saxpy", "-o", "yaml",
             "--no-headers"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->command, &kSelectCommand);
  EXPECT_TRUE(args->positional.empty());
  EXPECT_EQ(absl::GetFlag(FLAGS_server), "h:1");
  EXPECT_EQ(absl::GetFlag(FLAGS_kernel), "saxpy");
  EXPECT_EQ(*OutputFormatFromFlags(), OutputFormat::kYaml);
  EXPECT_TRUE(absl::GetFlag(FLAGS_no_headers));
}

TEST_F(ArgumentsTest, PositionalsInterleaveAndDoubleDashEndsFlags) {
  absl::StatusOr<Arguments> args =
      Parse({"run", "--kernel=k", "--", "env", "--kernel=x", "-"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->command, &kRunCommand);
  EXPECT_THAT(args->positional, ElementsAre("env", "--kernel=x", "-"));
  EXPECT_EQ(absl::GetFlag(FLAGS_kernel), "k");
}

TEST_F(ArgumentsTest, ShortFormsAndNegatedBools) {
  absl::StatusOr<Arguments> args = Parse({"nodes", "ls", "-ojson", "-h"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE(args->help);
  EXPECT_EQ(*OutputFormatFromFlags(), OutputFormat::kJson);
  args = Parse({"--json", "--nojson", "--version", "nodes", "ls"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE(args->version);
  EXPECT_FALSE(absl::GetFlag(FLAGS_json));
}

TEST_F(ArgumentsTest, UsageErrorsNameTheFlag) {
  EXPECT_THAT(Parse({"nodes", "ls", "--kernel=k"}).status().message(),
              HasSubstr("--kernel: not a flag of 'nodes'"));
  EXPECT_THAT(Parse({"nodes", "ls", "--bogus"}).status().message(),
              HasSubstr("--bogus: unknown flag"));
  EXPECT_THAT(Parse({"select", "--top_k=many"}).status().message(),
              HasSubstr("--top_k: "));
  EXPECT_THAT(Parse({"select", "--kernel"}).status().message(),
              HasSubstr("--kernel: needs a value"));
  EXPECT_THAT(Parse({"--kernel=k"}).status().message(),
              HasSubstr("--kernel: not a global flag"));
}

TEST(FlagsOfTest, UsageLinesAreTheDeclaration) {
  EXPECT_THAT(FlagsOf(kArchsCommand), ElementsAre("json"));
  const std::vector<std::string> run = FlagsOf(kRunCommand);
  EXPECT_THAT(run, ::testing::Contains("device_filter"));  // a job flag
  EXPECT_THAT(run, ::testing::Contains("wait"));
}

// The real binary: usage errors exit 2 (1 means "no placement"), help and
// --version exit 0.
int RunCli(const std::string& args, std::string* output) {
  const std::string cli =
      std::string(std::getenv("TEST_SRCDIR")) + "/ctxsel/client/cli/ctxsel-cli";
  const std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/out";
  const int status =
      std::system((cli + " " + args + " > " + out + " 2>&1").c_str());
  std::ifstream in(out);
  output->assign(std::istreambuf_iterator<char>(in), {});
  return WEXITSTATUS(status);
}

TEST(CliBinaryTest, UsageErrorsExitTwoHelpAndVersionExitZero) {
  std::string out;
  EXPECT_EQ(RunCli("nodes ls --bogus", &out), 2) << out;
  EXPECT_EQ(RunCli("nodes ls --kernel=saxpy", &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("--kernel: not a flag of 'nodes'"));
  EXPECT_EQ(RunCli("--timeout=soon ping", &out), 2) << out;
  EXPECT_EQ(RunCli("nodes ls -o xml", &out), 2) << out;
  EXPECT_EQ(RunCli("frobnicate", &out), 2) << out;
  ASSERT_EQ(RunCli("select --help", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("usage: ctxsel-cli select --kernel=K"));
  EXPECT_THAT(out, HasSubstr("--device_filter  "));
  ASSERT_EQ(RunCli("help select", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("usage: ctxsel-cli select"));
  ASSERT_EQ(RunCli("devices -h", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("usage: ctxsel-cli devices ls"));
  ASSERT_EQ(RunCli("completion bash", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("complete -o default -F _ctxsel_cli ctxsel-cli"));
  EXPECT_THAT(out, HasSubstr("    nodes) words=\"--json --server"));
  // The script completes a select flag after "select".
  EXPECT_EQ(
      RunCli("completion bash > \"$TEST_TMPDIR/c.sh\" && bash -c '. "
             "\"$TEST_TMPDIR/c.sh\"; COMP_WORDS=(ctxsel-cli select "
             "--device_); COMP_CWORD=2; _ctxsel_cli; echo \"${COMPREPLY[@]}\"'",
             &out),
      0)
      << out;
  EXPECT_EQ(out, "--device_filter\n");
  // zsh and fish from the same word lists: select's flags after "select".
  ASSERT_EQ(RunCli("completion zsh", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("compdef _ctxsel_cli ctxsel-cli"));
  EXPECT_THAT(out,
              ::testing::ContainsRegex("select\\) candidates=\\(--kernel"));
  ASSERT_EQ(RunCli("completion fish", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("complete -c ctxsel-cli -n "
                             "'__fish_seen_subcommand_from select' -l "
                             "device_filter\n"));
  EXPECT_EQ(RunCli("completion tcsh", &out), 2) << out;
  ASSERT_EQ(RunCli("--version", &out), 0) << out;
  EXPECT_THAT(out, ::testing::StartsWith("ctxsel-cli 0."));
}

}  // namespace
}  // namespace ctxsel::cli
