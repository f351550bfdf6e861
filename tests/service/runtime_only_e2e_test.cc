// Runtime-only conditions through the real server and CLI (issue 14 item
// 6): a C source whose conditions only the program can evaluate registers,
// the service never chooses those variants, and select/explain name the
// ones that rank above the choice.
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
using ::testing::Not;

constexpr char kSource[] =
    "struct S { int n; };\n"
    "#pragma omp declare variant(fft_tuned) match(device={arch(nvptx)}, "
    "user={condition(score(9): tuned_for(p->n))})\n"
    "#pragma omp declare variant(fft_nv) match(device={arch(nvptx), "
    "kind(gpu)})\n"
    "#pragma omp declare variant(fft_small) match(user={condition(sizeof(*p) "
    "> 4)})\n"
    "void fft(struct S *p, int n);\n";

TEST(RuntimeOnlyE2E, SelectNamesRuntimeOnlyVariantsAboveTheChoice) {
  auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = client::CtxselClient::Connect((*server)->address());
  for (const v1::Node& node :
       {GpuNode("gpu-nv", "nvidia", "nvptx", "nvidia_gpu_sm_90", 1),
        CpuNode("cpu-1")}) {
    auto reported = client->ReportNode(node);
    ASSERT_TRUE(reported.ok()) << reported.status();
  }
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + (*server)->address()});
    return RunCommand(args);
  };
  const std::string source = MakeTempDir("src") + "/fft.c";
  std::ofstream(source) << kSource;

  CommandResult reg = cli({"variants", "register", "--from_source", source});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_THAT(reg.stdout_text, HasSubstr("registered 3 variant(s) of fft"));

  // The program's identifiers (p, n) are not job variables: no --var needed.
  CommandResult table = cli({"select", "--kernel=fft"});
  ASSERT_EQ(table.exit_code, 0) << table.stderr_text;
  EXPECT_THAT(table.stdout_text, HasSubstr("fft_nv on gpu-nv/gpu0"));
  EXPECT_THAT(table.stdout_text,
              HasSubstr("runtime-only above it, the program decides: "
                        "fft_tuned"));
  EXPECT_THAT(table.stdout_text,
              HasSubstr("ranked above it with a runtime-only condition the "
                        "program decides: 'fft_tuned'"));

  CommandResult env = cli({"select", "--kernel=fft", "--format=env"});
  ASSERT_EQ(env.exit_code, 0) << env.stderr_text;
  EXPECT_THAT(env.stdout_text, HasSubstr("export CTXSEL_VARIANT='fft_nv'"));
  EXPECT_THAT(env.stdout_text,
              HasSubstr("export CTXSEL_RUNTIME_ONLY_VARIANTS='fft_tuned'"));

  CommandResult json = cli({"--json", "select", "--kernel=fft"});
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  EXPECT_THAT(json.stdout_text,
              HasSubstr("\"runtime_only_variants\":[\"fft_tuned\"]"));

  // On the CPU only the runtime-only fft_small is left: the service picks
  // the base function, and says the program may call fft_small.
  CommandResult cpu =
      cli({"select", "--kernel=fft", "--nodes=cpu-1", "--format=env"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.stderr_text;
  EXPECT_THAT(cpu.stdout_text, HasSubstr("export CTXSEL_VARIANT='fft'"));
  EXPECT_THAT(cpu.stdout_text,
              HasSubstr("export CTXSEL_RUNTIME_ONLY_VARIANTS='fft_small'"));

  CommandResult explain = cli({"explain", "--kernel=fft"});
  ASSERT_EQ(explain.exit_code, 0) << explain.stderr_text;
  EXPECT_THAT(explain.stdout_text,
              HasSubstr("runtime-only condition(tuned_for(p->n)): the program "
                        "decides"));
  EXPECT_THAT(explain.stdout_text,
              HasSubstr("runtime-only condition(sizeof(*p) > 4): the program "
                        "decides"));
  EXPECT_THAT(explain.stdout_text, Not(HasSubstr("SELECTED fft_tuned")));
}

}  // namespace
}  // namespace ctxsel::testing
