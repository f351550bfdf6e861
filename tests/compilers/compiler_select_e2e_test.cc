// `select --compiler=...` and `--ties=...` through the real server and CLI
// (issue 26 item 2): the server resolves a job with its compiler's rules,
// and its resolution cache keeps one answer per compiler, not the first
// one asked. The kernels are the shapes of positions.c, tie.c and
// simd_base.c, whose answers compiler_profiles_test checks against the
// real GCC 12 and clang 14.
#include <fstream>
#include <string>
#include <vector>

#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kSource[] =
    "void vpar(void); void vfor(void);\n"
    "#pragma omp declare variant(vpar) match(construct={parallel})\n"
    "#pragma omp declare variant(vfor) match(construct={for})\n"
    "void positions(void);\n"
    "void v1(void); void v2(void);\n"
    "#pragma omp declare variant(v1) match(device={kind(host)})\n"
    "#pragma omp declare variant(v2) match(device={kind(host)})\n"
    "void tie(void);\n"
    "void spar(void); void ssimd(void);\n"
    "#pragma omp declare variant(spar) match(construct={parallel})\n"
    "#pragma omp declare variant(ssimd) "
    "match(construct={parallel,for,simd})\n"
    "void simd_kernel(void);\n";

class CompilerSelectE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto client = client::CtxselClient::Connect(server_->address());
    ASSERT_TRUE(client->ReportNode(CpuNode("cpu-1")).ok());
    const std::string source = MakeTempDir("src") + "/kernels.c";
    std::ofstream(source) << kSource;
    CommandResult reg = Cli({"variants", "register", "--from_source", source});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }

  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }

  // The variant `select --format=env` names, or the exit code and stderr.
  std::string Variant(std::vector<std::string> args) {
    args.insert(args.begin(), {"select", "--format=env"});
    CommandResult r = Cli(args);
    if (r.exit_code != 0) {
      return "exit " + std::to_string(r.exit_code) + ": " + r.stderr_text;
    }
    const std::string key = "export CTXSEL_VARIANT='";
    size_t at = r.stdout_text.find(key);
    if (at == std::string::npos) return "no variant: " + r.stdout_text;
    at += key.size();
    return r.stdout_text.substr(at, r.stdout_text.find('\'', at) - at);
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CompilerSelectE2E, EachCompilerGetsItsOwnAnswerFromOneCache) {
  const std::vector<std::string> positions = {"--kernel=positions",
                                              "--construct=parallel,for"};
  auto with = [&](std::vector<std::string> args, const char* extra) {
    if (*extra) args.push_back(extra);
    return args;
  };
  // Asked in an order where a cache keyed without the compiler would
  // repeat the first answer.
  EXPECT_EQ(Variant(positions), "vfor");
  EXPECT_EQ(Variant(with(positions, "--compiler=gcc-12")), "vpar");
  EXPECT_EQ(Variant(with(positions, "--compiler=clang-14")), "vfor");
  EXPECT_EQ(Variant(with(positions, "--compiler=gcc-12")), "vpar");
  EXPECT_EQ(Variant(with(positions, "--compiler=spec")), "vfor");

  // GCC 12 calls the base function when the best variant names simd.
  const std::vector<std::string> simd = {"--kernel=simd_kernel",
                                         "--construct=parallel,for,simd"};
  EXPECT_EQ(Variant(simd), "ssimd");
  EXPECT_EQ(Variant(with(simd, "--compiler=gcc-12")), "simd_kernel");
}

TEST_F(CompilerSelectE2E, TheTieRuleIsAnExplicitChoice) {
  EXPECT_EQ(Variant({"--kernel=tie"}), "v1");
  EXPECT_EQ(Variant({"--kernel=tie", "--ties=last"}), "v2");
  EXPECT_EQ(Variant({"--kernel=tie", "--compiler=clang-14"}), "v2");
  EXPECT_EQ(Variant({"--kernel=tie", "--compiler=clang-14", "--ties=first"}),
            "v1");
  EXPECT_EQ(Variant({"--kernel=tie", "--ties=first"}), "v1");
}

TEST_F(CompilerSelectE2E, UnknownNamesAreRefused) {
  EXPECT_THAT(Variant({"--kernel=tie", "--compiler=icc"}),
              HasSubstr("--compiler: unknown compiler 'icc' (expected one of "
                        "spec, gcc-12, clang-14)"));
  EXPECT_THAT(Variant({"--kernel=tie", "--ties=newest"}),
              HasSubstr("--ties: unknown tie rule 'newest'"));
  // A client that skips the CLI's check gets the server's.
  auto client = client::CtxselClient::Connect(server_->address());
  v1::SelectRequest request;
  request.mutable_job()->set_kernel("tie");
  request.mutable_job()->set_compiler("gcc-99");
  auto answer = client->Select(request);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(answer.status().message(), HasSubstr("job.compiler"));
  EXPECT_THAT(answer.status().message(), HasSubstr("gcc-99"));
}

}  // namespace
}  // namespace ctxsel::testing
