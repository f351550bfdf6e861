// Revocation reaches open streams (docs/security.md, "Rotation"): after a
// SIGHUP that rereads a tokens file without their tokens, a reader's
// inventory watch and an agent's heartbeat stream end within a second, with
// UNAUTHENTICATED, while a watcher whose token stays keeps its stream; and
// --max_connection_age ends every stream, revocable or not, with the agent
// reconnecting by itself. Real server, real agent, loopback, TLS.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "base/status_details.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/security/tls_fleet.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

v1::Node CpuNode(const std::string& id) {
  v1::Node node;
  node.set_id(id);
  v1::Device* cpu = node.add_devices();
  cpu->set_index(-1);
  cpu->mutable_traits()->add_kind("cpu");
  cpu->mutable_traits()->add_kind("host");
  return node;
}

// A stream read on a thread of its own until the server ends it: when, and
// with what status.
class StreamEnd {
 public:
  template <typename Read, typename Finish>
  StreamEnd(Read read, Finish finish)
      : thread_([this, read, finish] {
          while (read()) {
          }
          ended_at_ = Clock::now();
          status_ = finish();
          ended_ = true;
        }) {}
  ~StreamEnd() { thread_.join(); }
  bool ended() const { return ended_; }
  Clock::time_point ended_at() const { return ended_at_; }
  const grpc::Status& status() const { return status_; }

 private:
  std::atomic<bool> ended_{false};
  Clock::time_point ended_at_;
  grpc::Status status_;
  std::thread thread_;
};

class RevocationE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<TlsFleet> fleet = TlsFleet::Make({"node-c"});
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
    for (const auto& [role, name] :
         std::vector<std::pair<std::string, std::string>>{
             {"reader", "dashboard"},
             {"reader", "grafana"},
             {"agent", "node-r"}}) {
      ASSERT_TRUE(fleet_.AddToken(role, name).ok());
    }
  }

  std::shared_ptr<grpc::Channel> Channel(const ClientSecurity& security) {
    return fleet_.Channel(server_->address(), security);
  }

  TlsFleet fleet_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(RevocationE2E, RevokedTokensLoseTheirOpenStreamsWithinASecond) {
  auto server = ServerProcess::Start(fleet_.ServerFlags());
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  ASSERT_TRUE(client::CtxselClient(Channel(fleet_.Token("node-r")))
                  .ReportNode(CpuNode("node-r"))
                  .ok());

  // node-r's heartbeat stream: one beat answered, then a read that waits.
  auto agent = v1::Inventory::NewStub(Channel(fleet_.Token("node-r")));
  grpc::ClientContext beat_context;
  auto beats = agent->Heartbeat(&beat_context);
  v1::HeartbeatRequest beat;
  beat.set_node("node-r");
  v1::HeartbeatResponse answer;
  ASSERT_TRUE(beats->Write(beat) && beats->Read(&answer));
  // Two watchers; only dashboard's token is revoked.
  struct Watch {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::InventoryEvent>> reader;
    v1::InventoryEvent event;
  };
  auto watch = [&](const std::string& name) {
    auto w = std::make_unique<Watch>();
    auto stub = v1::Inventory::NewStub(Channel(fleet_.Token(name)));
    v1::WatchInventoryRequest request;
    request.set_initial(true);
    w->reader = stub->WatchInventory(&w->context, request);
    return w;
  };
  std::unique_ptr<Watch> dashboard = watch("dashboard");
  std::unique_ptr<Watch> grafana = watch("grafana");
  // Both streams are open once their initial snapshot arrived.
  ASSERT_TRUE(dashboard->reader->Read(&dashboard->event));
  ASSERT_TRUE(grafana->reader->Read(&grafana->event));

  StreamEnd beat_end([&] { return beats->Read(&answer); },
                     [&] { return beats->Finish(); });
  StreamEnd dashboard_end(
      [&] { return dashboard->reader->Read(&dashboard->event); },
      [&] { return dashboard->reader->Finish(); });
  StreamEnd grafana_end([&] { return grafana->reader->Read(&grafana->event); },
                        [&] { return grafana->reader->Finish(); });
  // Whatever happens below, no reading thread is left waiting.
  absl::Cleanup cancel = [&] {
    beat_context.TryCancel();
    dashboard->context.TryCancel();
    grafana->context.TryCancel();
  };

  ASSERT_TRUE(fleet_.RemoveToken("dashboard").ok());
  ASSERT_TRUE(fleet_.RemoveToken("node-r").ok());
  const Clock::time_point hup = Clock::now();
  server_->process().Signal(SIGHUP);
  ASSERT_TRUE(Eventually([&] { return beat_end.ended(); }, seconds(3)));
  ASSERT_TRUE(Eventually([&] { return dashboard_end.ended(); }, seconds(3)));
  const auto beat_ms =
      std::chrono::duration_cast<milliseconds>(beat_end.ended_at() - hup);
  const auto watch_ms =
      std::chrono::duration_cast<milliseconds>(dashboard_end.ended_at() - hup);
  std::printf(
      "after SIGHUP: heartbeat stream ended in %ld ms, watch in %ld "
      "ms\n",
      static_cast<long>(beat_ms.count()), static_cast<long>(watch_ms.count()));
  EXPECT_LT(beat_ms, seconds(1));
  EXPECT_LT(watch_ms, seconds(1));
  EXPECT_EQ(beat_end.status().error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << beat_end.status().error_message();
  EXPECT_EQ(dashboard_end.status().error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(dashboard_end.status().error_message(),
              ::testing::HasSubstr("revoked"));
  // A program tells a revoked credential from a wrong one by its reason.
  for (const grpc::Status& end : {beat_end.status(), dashboard_end.status()}) {
    auto info = GetDetail<google::rpc::ErrorInfo>(
        FromRpcStatus(static_cast<absl::StatusCode>(end.error_code()),
                      end.error_message(), end.error_details()));
    ASSERT_TRUE(info.has_value()) << end.error_message();
    EXPECT_EQ(info->reason(), kReasonCredentialRevoked);
  }

  // grafana's token stays: its watch is still open.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(grafana_end.ended());
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(server_->Log(), "ended 2 open stream(s)");
  }));
  // The revoked agent cannot come back with its old token.
  EXPECT_EQ(client::CtxselClient(Channel(fleet_.Token("node-r")))
                .ReportNode(CpuNode("node-r"))
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
}

// Reason of a gRPC status (its google.rpc.ErrorInfo); "" without one.
std::string ReasonOf(const grpc::Status& status) {
  auto info = GetDetail<google::rpc::ErrorInfo>(
      FromRpcStatus(static_cast<absl::StatusCode>(status.error_code()),
                    status.error_message(), status.error_details()));
  return info.has_value() ? info->reason() : "";
}

// Client certificates: the server's own certificate (same CA) is no agent,
// and a certificate put on --revoked_certs loses its heartbeat stream within
// a second of SIGHUP and cannot call again.
TEST_F(RevocationE2E, RevokedCertificateLosesItsStreamWithinASecond) {
  const std::string revoked = fleet_.dir() + "/revoked_certs";
  std::ofstream(revoked) << "# none yet\n";
  std::vector<std::string> flags = fleet_.ServerFlags();
  flags.push_back("--revoked_certs=" + revoked);
  auto server = ServerProcess::Start(flags);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);

  ClientSecurity server_cert = fleet_.Cert("node-c");
  server_cert.cert_file = fleet_.dir() + "/server.pem";
  server_cert.key_file = fleet_.dir() + "/server.key";
  grpc::ClientContext as_server;
  v1::ReportNodeRequest report;
  *report.mutable_node() = CpuNode("localhost");
  v1::ReportNodeResponse reported;
  const grpc::Status refused = v1::Inventory::NewStub(Channel(server_cert))
                                   ->ReportNode(&as_server, report, &reported);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << refused.error_message();
  EXPECT_EQ(ReasonOf(refused), kReasonCertificateRefused);

  ASSERT_TRUE(client::CtxselClient(Channel(fleet_.Cert("node-c")))
                  .ReportNode(CpuNode("node-c"))
                  .ok());
  auto agent = v1::Inventory::NewStub(Channel(fleet_.Cert("node-c")));
  grpc::ClientContext beat_context;
  auto beats = agent->Heartbeat(&beat_context);
  v1::HeartbeatRequest beat;
  beat.set_node("node-c");
  v1::HeartbeatResponse answer;
  ASSERT_TRUE(beats->Write(beat) && beats->Read(&answer));
  StreamEnd beat_end([&] { return beats->Read(&answer); },
                     [&] { return beats->Finish(); });
  absl::Cleanup cancel = [&] { beat_context.TryCancel(); };

  std::ofstream(revoked) << "name node-c\n";
  const Clock::time_point hup = Clock::now();
  server_->process().Signal(SIGHUP);
  ASSERT_TRUE(Eventually([&] { return beat_end.ended(); }, seconds(3)));
  const auto beat_ms =
      std::chrono::duration_cast<milliseconds>(beat_end.ended_at() - hup);
  std::printf(
      "after SIGHUP: a revoked certificate's heartbeat ended in %ld ms\n",
      static_cast<long>(beat_ms.count()));
  EXPECT_LT(beat_ms, seconds(1));
  EXPECT_EQ(beat_end.status().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ReasonOf(beat_end.status()), kReasonCredentialRevoked);
  const absl::Status again =
      client::CtxselClient(Channel(fleet_.Cert("node-c")))
          .ReportNode(CpuNode("node-c"))
          .status();
  EXPECT_EQ(again.code(), absl::StatusCode::kUnauthenticated) << again;
  EXPECT_THAT(std::string(again.message()), ::testing::HasSubstr("revoked"));
}

// The connection age bounds what any credential holds. Every stream ends after
// --max_connection_age (+ its grace); the real agent reconnects by itself, and
// its node never expires meanwhile.
TEST_F(RevocationE2E, ConnectionAgeEndsEveryStreamAndAgentsComeBack) {
  std::vector<std::string> flags = fleet_.ServerFlags();
  flags.push_back("--max_connection_age=2s");
  flags.push_back("--max_connection_age_grace=500ms");
  auto server = ServerProcess::Start(flags);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  const std::string& d = fleet_.dir();
  const std::string agent_log = d + "/agent.log";
  auto agent = Subprocess::Start(
      {RunfilePath("agent/ctxsel-agent"), "--server=" + server_->address(),
       "--node_id=node-c", "--backends=",
       "--devices_file=" + RunfilePath("tools/fixtures/fleet/pvc.json"),
       "--heartbeat=200ms", "--ca=" + d + "/ca.pem",
       "--tls_cert=" + d + "/node-c.pem", "--tls_key=" + d + "/node-c.key"},
      agent_log, agent_log);
  ASSERT_TRUE(agent.ok()) << agent.status();
  client::CtxselClient reader(Channel(fleet_.Token("grafana")));
  auto listed = [&] {
    absl::StatusOr<std::vector<v1::NodeSummary>> nodes =
        reader.ListNodes(false);
    if (!nodes.ok()) return false;
    for (const v1::NodeSummary& node : *nodes) {
      if (node.node().id() == "node-c") return true;
    }
    return false;
  };
  ASSERT_TRUE(Eventually(listed, seconds(10))) << ReadFileOrEmpty(agent_log);

  auto stub = v1::Inventory::NewStub(Channel(fleet_.Token("grafana")));
  grpc::ClientContext context;
  v1::WatchInventoryRequest request;
  auto watch = stub->WatchInventory(&context, request);
  v1::InventoryEvent event;
  const Clock::time_point opened = Clock::now();
  StreamEnd watch_end([&] { return watch->Read(&event); },
                      [&] { return watch->Finish(); });
  absl::Cleanup cancel = [&] { context.TryCancel(); };
  // 2 s of age (gRPC adds up to 10% of jitter) and 0.5 s of grace; the
  // node must be listed at every look meanwhile and after.
  int missing = 0;
  while (Clock::now() < opened + seconds(6)) {
    missing += !listed();
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(watch_end.ended());
  const auto watch_ms =
      std::chrono::duration_cast<milliseconds>(watch_end.ended_at() - opened);
  std::printf("--max_connection_age=2s: a watch ended after %ld ms (%s)\n",
              static_cast<long>(watch_ms.count()),
              watch_end.status().error_message().c_str());
  EXPECT_LT(watch_ms, seconds(4));
  EXPECT_EQ(missing, 0) << ReadFileOrEmpty(agent_log);
  EXPECT_THAT(server_->Log(),
              ::testing::Not(::testing::HasSubstr("node node-c removed")));
  (*agent)->Signal(SIGTERM);
  EXPECT_EQ((*agent)->Wait(seconds(5)), 0);
}

}  // namespace
}  // namespace ctxsel::testing
