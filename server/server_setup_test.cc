#include "server/server_setup.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/sqlite_store.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

// A fresh directory under the test's temporary directory.
std::string TempDir(const std::string& name) {
  const char* root = std::getenv("TEST_TMPDIR");
  std::string pattern =
      std::string(root != nullptr ? root : "/tmp") + "/" + name + "-XXXXXX";
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

ServerOptions TestOptions(const std::string& data_dir) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = data_dir;
  return options;
}

std::shared_ptr<grpc::Channel> Connect(int port) {
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                             grpc::InsecureChannelCredentials());
}

grpc::Status Ping(int port) {
  auto stub = v1::Ctxsel::NewStub(Connect(port));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  v1::PingRequest request;
  v1::PingResponse response;
  return stub->Ping(&context, request, &response);
}

TEST(ServerSetupTest, ServesPingAndHealthOnAFreePort) {
  auto server = BuildServer(TestOptions(TempDir("serve")));
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_TRUE(Ping(port).ok());

  auto health = grpc::health::v1::Health::NewStub(Connect(port));
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  (*server)->Shutdown(absl::Milliseconds(100));
  EXPECT_FALSE(Ping(port).ok());
}

TEST(ServerSetupTest, NodeTtlDefaultsToThreeHeartbeats) {
  ServerOptions options = TestOptions(TempDir("ttl"));
  options.heartbeat_interval = absl::Milliseconds(200);
  auto server = BuildServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->node_ttl(), absl::Milliseconds(600));
  server->reset();
  options.node_ttl = absl::Seconds(7);
  server = BuildServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->node_ttl(), absl::Seconds(7));
}

// SO_REUSEPORT is off: a second server on a taken port fails to start
// instead of sharing it.
TEST(ServerSetupTest, TakenPortIsAnError) {
  auto first = BuildServer(TestOptions(TempDir("first")));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerOptions options = TestOptions(TempDir("second"));
  options.listen = absl::StrCat("127.0.0.1:", (*first)->port());
  auto second = BuildServer(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("cannot listen on"));
  EXPECT_TRUE(Ping((*first)->port()).ok());
}

TEST(ServerSetupTest, VariantsSurviveARebuildOnTheSameDataDir) {
  const std::string dir = TempDir("durable");
  {
    auto server = BuildServer(TestOptions(dir));
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<RegisterResult> registered = (*server)->registry().Register(
        "saxpy", {{"saxpy_gpu", "device={kind(gpu)}", {}}}, false);
    ASSERT_TRUE(registered.ok()) << registered.status();
  }
  auto server = BuildServer(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->registry().kernel_count(), 1u);
}

TEST(ServerSetupTest, CorruptStoreIsReported) {
  const std::string dir = TempDir("corrupt");
  {
    std::ofstream out(dir + "/" + SqliteStore::kFileName);
    out << std::string(8192, 'x');
  }
  auto server = BuildServer(TestOptions(dir));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("the variant store"));
}

TEST(ServerSetupTest, PortFileHoldsThePort) {
  const std::string dir = TempDir("port");
  ASSERT_TRUE(WritePortFile(dir + "/port", 4242).ok());
  std::ifstream in(dir + "/port");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "4242\n");
  EXPECT_FALSE(WritePortFile(dir + "/missing/port", 1).ok());
}

}  // namespace
}  // namespace ctxsel::server
