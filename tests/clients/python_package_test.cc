// The Python client package (clients/python) as a user gets it: built and
// installed with pip into a fresh venv (its stubs generated at build time
// by protoc), then driven against the real server by
// python_package_client.py.
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

TEST(PythonPackageTest, InstallsWithPipAndDrivesTheServer) {
  const std::string dir = MakeTempDir("python_package");
  // A copy, as a checkout would be: pip builds in the source tree.
  const std::string source = dir + "/python";
  CommandResult copied =
      RunCommand({"/bin/cp", "-rL", RunfilePath("clients/python"), source},
                 std::chrono::seconds(30));
  ASSERT_EQ(copied.exit_code, 0) << copied.stderr_text;
  const std::string venv = dir + "/venv";
  CommandResult made = RunCommand(
      {"/usr/bin/python3", "-m", "venv", "--system-site-packages", venv},
      std::chrono::seconds(60));
  ASSERT_EQ(made.exit_code, 0) << made.stdout_text << made.stderr_text;
  CommandResult installed = RunCommand(
      {"/usr/bin/env",
       "CTXSEL_PROTO_ROOT=" +
           ImportRoot("proto/ctxsel/v1/ctxsel.proto", "ctxsel/v1/ctxsel.proto"),
       "CTXSEL_GOOGLEAPIS_ROOT=" +
           ImportRoot("third_party/googleapis/google/rpc/status.proto",
                      "google/rpc/status.proto"),
       venv + "/bin/pip", "install", "--no-build-isolation", "--no-index",
       "--quiet", source},
      std::chrono::seconds(120));
  ASSERT_EQ(installed.exit_code, 0)
      << installed.stdout_text << installed.stderr_text;

  // The script reports its node once and never beats: a TTL that outlasts
  // the script (the default, 3 s, is shorter than its claims' waits).
  auto server = ServerProcess::Start({"--node_ttl=10m"});
  ASSERT_TRUE(server.ok()) << server.status();
  CommandResult run =
      RunCommand({venv + "/bin/python",
                  RunfilePath("tests/clients/python_package_client.py"),
                  (*server)->address()},
                 std::chrono::seconds(90));
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("python package ok"));
}

}  // namespace
}  // namespace ctxsel::testing
