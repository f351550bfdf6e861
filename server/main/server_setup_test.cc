#include "server/main/server_setup.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/rpc/heartbeat_queues.h"
#include "server/store/sqlite_store.h"

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
  options.insecure = true;
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

TEST(ServerSetupTest, BadListenAddressIsAnError) {
  for (const std::string address :
       {"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "no.such.host.:0"}) {
    ServerOptions options = TestOptions(TempDir("bad-address"));
    options.listen = address;
    auto server = BuildServer(options);
    ASSERT_FALSE(server.ok()) << address;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument)
        << server.status();
    EXPECT_THAT(server.status().message(), HasSubstr("listen address"));
  }
}

// A compression bomb: a request that is small on the wire (gzip) but large
// inflated. The server accepts identity encoding only, so it refuses the
// request without inflating it, and keeps serving.
TEST(ServerSetupTest, CompressedRequestsAreRefused) {
  auto server = BuildServer(TestOptions(TempDir("gzip")));
  ASSERT_TRUE(server.ok()) << server.status();
  grpc::ChannelArguments args;
  args.SetCompressionAlgorithm(GRPC_COMPRESS_GZIP);
  auto stub = v1::Variants::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", (*server)->port()),
                                grpc::InsecureChannelCredentials(), args));
  v1::RegisterVariantsRequest request;
  request.set_kernel("k");
  v1::Variant* variant = request.add_variants();
  variant->set_name("v");
  // 64 MiB inflated, about 64 KiB gzipped: well under the 4 MiB limit.
  variant->set_selector(std::string(64 << 20, ' '));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  v1::RegisterVariantsResponse response;
  grpc::Status status = stub->RegisterVariants(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("gzip"));
  EXPECT_EQ((*server)->registry().kernel_count(), 0);
  EXPECT_TRUE(Ping((*server)->port()).ok());
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

// A node with one device, as its agent reports it.
v1::Node TestNode(const std::string& id) {
  v1::Node node;
  node.set_id(id);
  v1::Device* device = node.add_devices();
  device->set_id(absl::StrCat(id, "/cpu0"));
  device->set_node(id);
  device->mutable_traits()->add_kind("cpu");
  return node;
}

// More streams than queues, open at once: the queues take calls again
// after each arrival, answers each beat, and shuts down with streams open.
TEST(ServerSetupTest, HeartbeatStreamsAreServedOnTheirQueues) {
  ServerOptions options = TestOptions(TempDir("beats"));
  options.heartbeat_queues = 3;
  auto server = BuildServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto inventory = v1::Inventory::NewStub(Connect((*server)->port()));

  constexpr int kStreams = 12;
  struct Agent {
    grpc::ClientContext context;
    std::unique_ptr<
        grpc::ClientReaderWriter<v1::HeartbeatRequest, v1::HeartbeatResponse>>
        stream;
  };
  std::vector<Agent> agents(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    const std::string node = absl::StrCat("n", i);
    // Every other node is left unknown: its beats are answered re-report.
    if (i % 2 == 0) {
      grpc::ClientContext context;
      v1::ReportNodeRequest request;
      *request.mutable_node() = TestNode(node);
      v1::ReportNodeResponse response;
      ASSERT_TRUE(inventory->ReportNode(&context, request, &response).ok());
    }
    agents[i].stream = inventory->Heartbeat(&agents[i].context);
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kStreams; ++i) {
      v1::HeartbeatRequest beat;
      beat.set_node(absl::StrCat("n", i));
      ASSERT_TRUE(agents[i].stream->Write(beat)) << i;
    }
    for (int i = 0; i < kStreams; ++i) {
      v1::HeartbeatResponse answer;
      ASSERT_TRUE(agents[i].stream->Read(&answer)) << i;
      EXPECT_EQ(answer.action(), i % 2 == 0
                                     ? v1::HeartbeatResponse::ACTION_UNSPECIFIED
                                     : v1::HeartbeatResponse::ACTION_REREPORT)
          << i;
      EXPECT_EQ(answer.heartbeat_interval().seconds(), 1);
    }
  }
  // A beat for another node than the stream's first ends that stream.
  v1::HeartbeatRequest other;
  other.set_node("n1");
  ASSERT_TRUE(agents[0].stream->Write(other));
  v1::HeartbeatResponse answer;
  EXPECT_FALSE(agents[0].stream->Read(&answer));
  grpc::Status ended = agents[0].stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ended.error_message(), HasSubstr("first 'n0'"));

  // The rest are open, each with a read waiting on its queue.
  (*server)->Shutdown(absl::Milliseconds(100));
  for (int i = 1; i < kStreams; ++i) {
    EXPECT_FALSE(agents[i].stream->Read(&answer)) << i;
    EXPECT_FALSE(agents[i].stream->Finish().ok()) << i;
  }
}

TEST(ServerSetupTest, OneHeartbeatQueuePerFourCores) {
  EXPECT_EQ(DefaultHeartbeatQueues(0), 1);
  EXPECT_EQ(DefaultHeartbeatQueues(2), 1);
  EXPECT_EQ(DefaultHeartbeatQueues(16), 4);
  EXPECT_EQ(DefaultHeartbeatQueues(64), 8);
}

TEST(GrpcMemoryBudgetTest, AQuarterOfTheMemoryAtMostOneGibibyte) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(GrpcMemoryBudget(2 * kGiB, 0), kGiB / 2);
  EXPECT_EQ(GrpcMemoryBudget(64 * kGiB, 0), kGiB);
  // A cgroup limit below the machine's memory is what the process has.
  EXPECT_EQ(GrpcMemoryBudget(64 * kGiB, kGiB), kGiB / 4);
  EXPECT_EQ(GrpcMemoryBudget(kGiB, 64 * kGiB), kGiB / 4);
  // This machine's default is such a budget, and is on.
  EXPECT_GT(DefaultGrpcMemoryBytes(), 0);
  EXPECT_LE(DefaultGrpcMemoryBytes(), kGiB);
  EXPECT_EQ(ServerOptions().max_grpc_memory_bytes, DefaultGrpcMemoryBytes());
}

}  // namespace
}  // namespace ctxsel::server
