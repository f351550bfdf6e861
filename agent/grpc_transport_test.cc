#include "agent/grpc_transport.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

using ::testing::HasSubstr;

// Answers every beat, or (`silent`) reads beats and never answers, as a
// paused server whose kernel still holds the connection open.
class FakeInventory final : public v1::Inventory::Service {
 public:
  explicit FakeInventory(bool silent) : silent_(silent) {}
  grpc::Status Heartbeat(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::HeartbeatResponse, v1::HeartbeatRequest>*
          stream) override {
    v1::HeartbeatRequest request;
    while (stream->Read(&request)) {
      if (silent_) {
        while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
        return grpc::Status::CANCELLED;
      }
      stream->Write(v1::HeartbeatResponse());  // recorded
    }
    return grpc::Status::OK;
  }

 private:
  const bool silent_;
};

std::unique_ptr<grpc::Server> Start(FakeInventory* service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           port);
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

// A transport to the fake server on `port` with `timeout`.
GrpcInventoryTransport TransportTo(int port, absl::Duration timeout) {
  return GrpcInventoryTransport(
      [port] {
        return grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
      },
      "test", timeout);
}

TEST(GrpcTransportTest, BeatsAreAnswered) {
  FakeInventory service(/*silent=*/false);
  int port = 0;
  std::unique_ptr<grpc::Server> server = Start(&service, &port);
  GrpcInventoryTransport transport = TransportTo(port, absl::Seconds(10));
  std::unique_ptr<HeartbeatStream> stream = transport.OpenHeartbeat();
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<BeatAnswer> answer = stream->Beat("n1", {});
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_FALSE(answer->rereport);
  }
  stream.reset();
  server->Shutdown();
}

// A server that takes beats but never answers (paused, cut off) cannot hold
// the agent: the beat fails once its answer is overdue.
TEST(GrpcTransportTest, ABeatWithoutAnswerFailsAfterTheTimeout) {
  FakeInventory service(/*silent=*/true);
  int port = 0;
  std::unique_ptr<grpc::Server> server = Start(&service, &port);
  GrpcInventoryTransport transport = TransportTo(port, absl::Milliseconds(300));
  std::unique_ptr<HeartbeatStream> stream = transport.OpenHeartbeat();
  absl::StatusOr<BeatAnswer> answer = stream->Beat("n1", {});
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(answer.status().message(), HasSubstr("no answer within 300ms"));
  stream.reset();
  server->Shutdown();
}

}  // namespace
}  // namespace ctxsel::agent
