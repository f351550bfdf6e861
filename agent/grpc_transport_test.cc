#include "agent/grpc_transport.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/error_reasons.h"
#include "base/grpc_status.h"
#include "base/status_details.h"
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

// Refuses every report and deregistration with google.rpc details, as
// the server does.
class RefusingInventory final : public v1::Inventory::Service {
 public:
  grpc::Status ReportNode(grpc::ServerContext*, const v1::ReportNodeRequest*,
                          v1::ReportNodeResponse*) override {
    return ToGrpcStatus(WithErrorInfo(
        FieldViolation("node.devices[0].id", "empty"), "BAD_DEVICE"));
  }
  grpc::Status Deregister(grpc::ServerContext*, const v1::DeregisterRequest*,
                          v1::DeregisterResponse*) override {
    return ToGrpcStatus(
        WithResourceInfo(absl::NotFoundError("node: 'n1' is not known"),
                         "ctxsel.v1.Node", "n1"));
  }
};

// Refuses reports as a stale replica does, or (`fresh`) takes them;
// counts the reports it saw.
class ReplicaInventory final : public v1::Inventory::Service {
 public:
  explicit ReplicaInventory(bool fresh) : fresh_(fresh) {}
  grpc::Status ReportNode(grpc::ServerContext*, const v1::ReportNodeRequest*,
                          v1::ReportNodeResponse*) override {
    ++reports;
    if (fresh_) return grpc::Status::OK;
    return ToGrpcStatus(WithErrorInfo(absl::UnavailableError("stale"),
                                      kReasonStoreUnavailable));
  }
  std::atomic<int> reports{0};

 private:
  const bool fresh_;
};

std::unique_ptr<grpc::Server> Start(grpc::Service* service, int* port) {
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

// The agent leaves a replica that does not answer within twice its beat
// (at least 2 s, at most 5 s): a paused replica's agents report elsewhere
// before its node lease (5 s) lets their nodes lapse.
TEST(GrpcTransportTest, AnswerTimeoutFollowsTheHeartbeat) {
  EXPECT_EQ(HeartbeatAnswerTimeout(absl::Milliseconds(500)), absl::Seconds(2));
  EXPECT_EQ(HeartbeatAnswerTimeout(absl::Seconds(2)), absl::Seconds(4));
  EXPECT_EQ(HeartbeatAnswerTimeout(absl::Seconds(5)), absl::Seconds(5));
}

// The server's google.rpc details reach the reporter (they used to be
// dropped here, leaving only code and message).
TEST(GrpcTransportTest, RefusalsKeepTheirDetails) {
  RefusingInventory service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = Start(&service, &port);
  GrpcInventoryTransport transport = TransportTo(port, absl::Seconds(10));
  absl::StatusOr<ReportAnswer> report = transport.ReportNode("n1", {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("ReportNode: "));
  auto bad = GetDetail<google::rpc::BadRequest>(report.status());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->field_violations(0).field(), "node.devices[0].id");
  auto info = GetDetail<google::rpc::ErrorInfo>(report.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "BAD_DEVICE");

  absl::Status gone = transport.Deregister("n1");
  EXPECT_EQ(gone.code(), absl::StatusCode::kNotFound);
  auto resource = GetDetail<google::rpc::ResourceInfo>(gone);
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->resource_name(), "n1");
  server->Shutdown();
}

// After quorum loss the agent need not wait a backoff per stale replica
// to find the one back in step: a report refused as stale goes on to the
// next replica at once, one try each.
TEST(GrpcTransportTest, AReportRefusedAsStaleTriesTheNextReplicaAtOnce) {
  ReplicaInventory stale_a(/*fresh=*/false), stale_b(/*fresh=*/false),
      fresh(/*fresh=*/true);
  int ports[3] = {0, 0, 0};
  std::unique_ptr<grpc::Server> servers[3] = {Start(&stale_a, &ports[0]),
                                              Start(&stale_b, &ports[1]),
                                              Start(&fresh, &ports[2])};
  int next = 0;
  auto rotation = [&] {
    const int port = ports[next++ % 3];
    return grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                               grpc::InsecureChannelCredentials());
  };
  GrpcInventoryTransport transport(rotation, "test", absl::Seconds(10),
                                   absl::ZeroDuration(), /*replicas=*/3);
  absl::StatusOr<ReportAnswer> report = transport.ReportNode("n1", {});
  EXPECT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(fresh.reports.load(), 1);

  // One try per replica: with every one stale the refusal comes back.
  GrpcInventoryTransport all_stale(rotation, "test", absl::Seconds(10),
                                   absl::ZeroDuration(), /*replicas=*/2);
  next = 0;
  report = all_stale.ReportNode("n1", {});
  EXPECT_EQ(report.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(stale_a.reports.load(), 2);
  EXPECT_EQ(stale_b.reports.load(), 2);
  EXPECT_EQ(fresh.reports.load(), 1);
  for (auto& server : servers) server->Shutdown();
}

}  // namespace
}  // namespace ctxsel::agent
