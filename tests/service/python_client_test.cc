// An independent client does the claim cycle: Debian's python3-grpcio with
// stubs generated from ctxsel.proto at test time (claims_client.py), run
// with /usr/bin/python3 against the real server.
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

TEST(PythonClientTest, ClaimCycle) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = client::CtxselClient::Connect((*server)->address());
  auto reported = client->ReportNode(
      GpuNode("gpu1", "nvidia", "nvptx", "nvidia_gpu_sm_90", 1));
  ASSERT_TRUE(reported.ok()) << reported.status();
  v1::RegisterVariantsRequest variants;
  variants.set_kernel("saxpy");
  v1::Variant* nv = variants.add_variants();
  nv->set_name("saxpy_nv");
  nv->set_selector("device={arch(nvptx)}");
  ASSERT_TRUE(client->RegisterVariants(variants).ok());

  const std::string proto = RunfilePath("proto/ctxsel/v1/ctxsel.proto");
  const std::string proto_root = proto.substr(
      0, proto.size() - std::string("ctxsel/v1/ctxsel.proto").size());
  const std::string status =
      RunfilePath("third_party/googleapis/google/rpc/status.proto");
  const std::string googleapis_root = status.substr(
      0, status.size() - std::string("google/rpc/status.proto").size());
  CommandResult run = RunCommand(
      {"/usr/bin/python3", RunfilePath("tests/service/claims_client.py"),
       (*server)->address(), proto_root, googleapis_root,
       MakeTempDir("python")},
      std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_THAT(run.stdout_text, ::testing::HasSubstr("claim cycle ok"));
}

}  // namespace
}  // namespace ctxsel::testing
