// Clients that share no code with ctxsel's own: Python with stubs generated
// at test time (independent_client.py), and a client that knows no .proto
// and learns the API through server reflection (reflection_client.py).
// A third runs docs/api.md's example. All run with /usr/bin/python3 (Debian's
// python3-grpcio) against the real server.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

// The directory a runfile's import path is relative to.
std::string ImportRoot(const std::string& file, const std::string& import) {
  const std::string path = RunfilePath(file);
  return path.substr(0, path.size() - import.size());
}

TEST(IndependentClientsTest, PythonStubsDriveTheServiceAndReadErrorDetails) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  CommandResult run = RunCommand(
      {"/usr/bin/python3", RunfilePath("tests/clients/independent_client.py"),
       (*server)->address(),
       ImportRoot("proto/ctxsel/v1/ctxsel.proto", "ctxsel/v1/ctxsel.proto"),
       ImportRoot("third_party/googleapis/google/rpc/status.proto",
                  "google/rpc/status.proto"),
       MakeTempDir("stubs")},
      std::chrono::seconds(90));
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("independent client ok"));
}

TEST(IndependentClientsTest, ReflectionAloneListsServicesAndSelects) {
  auto server = ServerProcess::Start({"--reflection"});
  ASSERT_TRUE(server.ok()) << server.status();
  CommandResult run = RunCommand(
      {"/usr/bin/python3", RunfilePath("tests/clients/reflection_client.py"),
       (*server)->address(), MakeTempDir("reflection")},
      std::chrono::seconds(90));
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("ctxsel.v1.Placement"));
  EXPECT_THAT(run.stdout_text, HasSubstr("reflection client ok"));
}

// docs/api.md's commands and Python client, run as the page shows them.
TEST(IndependentClientsTest, ApiPageExampleRunsAsShown) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  CommandResult run = RunCommand(
      {"/usr/bin/python3", RunfilePath("tests/clients/doc_example.py"),
       RunfilePath("docs/api.md"), (*server)->address(),
       ImportRoot("proto/ctxsel/v1/ctxsel.proto", "ctxsel/v1/ctxsel.proto"),
       ImportRoot("third_party/googleapis/google/rpc/status.proto",
                  "google/rpc/status.proto"),
       MakeTempDir("doc")},
      std::chrono::seconds(90));
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("doc example ok"));
}

}  // namespace
}  // namespace ctxsel::testing
