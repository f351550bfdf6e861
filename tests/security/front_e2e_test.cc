// The front (tools/front/haproxy.cfg; docs/deployment.md, "The front"), end
// to end on loopback: the real ctxsel-server behind Debian's real HAProxy
// running the shipped configuration, raw HTTP/2 attackers without
// credentials from 127.0.0.2, and an authenticated launcher from 127.0.0.1
// whose Selects must keep their rate. gRPC 1.51 has no bound of its own on
// rapid reset (issue 23: Select 2,729/s -> 0/s, RSS 24 MB -> 2.7 GB); the
// DISABLED_ tests measure that, straight at the server, for the docs:
//   bazel test //tests/security:front_e2e_test \
//       --test_arg=--gtest_also_run_disabled_tests --test_output=all
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/security/tls_fleet.h"
#include "tests/testing/raw_http2.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHaproxy[] = "/usr/sbin/haproxy";
constexpr char kSelect[] = "/ctxsel.v1.Placement/Select";
// Attackers come from here; the launcher from 127.0.0.1.
constexpr char kAttacker[] = "127.0.0.2";

double MiB(int64_t bytes) { return bytes / 1048576.0; }

// A free loopback port: HAProxy's bind takes no port 0.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

// HAProxy running tools/front/haproxy.cfg with the configuration's
// variables `env` ("NAME=VALUE"), listening on a free loopback port.
class Front {
 public:
  static absl::StatusOr<std::unique_ptr<Front>> Start(
      std::vector<std::string> env) {
    std::unique_ptr<Front> front(new Front);
    front->port_ = FreePort();
    front->log_path_ = MakeTempDir("front") + "/haproxy.log";
    std::vector<std::string> argv = {"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(
        absl::StrCat("CTXSEL_FRONT_LISTEN=127.0.0.1:", front->port_));
    argv.insert(argv.end(), {kHaproxy, "-db", "-f",
                             RunfilePath("tools/front/haproxy.cfg")});
    auto process = Subprocess::Start(argv, front->log_path_, front->log_path_);
    if (!process.ok()) return process.status();
    front->process_ = *std::move(process);
    const auto end = std::chrono::steady_clock::now() + seconds(10);
    while (!Accepts(front->port_)) {
      if (!front->process_->Running() ||
          std::chrono::steady_clock::now() > end) {
        return absl::UnavailableError("haproxy: " + front->Log());
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return front;
  }

  int port() const { return port_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  Subprocess& process() { return *process_; }
  std::string Log() const { return ReadFileOrEmpty(log_path_); }

 private:
  Front() = default;
  std::unique_ptr<Subprocess> process_;
  std::string log_path_;
  int port_ = 0;
};

// Selects made one after another for a while, and how many succeeded.
struct SelectRun {
  int ok = 0;
  int total = 0;
  grpc::Status first_error;
  double seconds = 0;
  double per_second() const { return seconds > 0 ? ok / seconds : 0; }
};

// A launcher with a bearer token over plaintext (the test's front and
// server speak h2c on loopback), Selecting through `address`.
class Launcher {
 public:
  Launcher(const std::string& address, const std::string& token)
      : stub_(v1::Placement::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        token_(token) {
    request_.mutable_job()->set_kernel("scale");
  }

  grpc::Status Select() {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token_);
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::SelectResponse response;
    return stub_->Select(&context, request_, &response);
  }

  SelectRun SelectFor(std::chrono::steady_clock::duration period) {
    SelectRun run;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < start + period) {
      ++run.total;
      const grpc::Status status = Select();
      run.ok += status.ok();
      if (!status.ok() && run.first_error.ok()) run.first_error = status;
    }
    run.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return run;
  }

 private:
  std::unique_ptr<v1::Placement::Stub> stub_;
  std::string token_;
  v1::SelectRequest request_;
};

// The peak RSS of a process, sampled every 50 ms while it lives.
class RssPeak {
 public:
  explicit RssPeak(pid_t pid)
      : thread_([this, pid] {
          while (!stop_) {
            peak_ = std::max<int64_t>(peak_, ResidentBytes(pid).value_or(0));
            std::this_thread::sleep_for(milliseconds(50));
          }
        }) {}
  ~RssPeak() { Stop(); }
  int64_t Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> peak_{0};
  std::thread thread_;
};

// A plaintext server that requires tokens, with one kernel and one node,
// and, unless `direct`, the front before it.
class FloodTest : public ::testing::Test {
 protected:
  void Start(bool direct, const std::vector<std::string>& server_flags = {}) {
    absl::StatusOr<TlsFleet> fleet = TlsFleet::Make({});
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
    auto ops = fleet_.AddToken("admin", "ops");
    auto slurm = fleet_.AddToken("launcher", "slurm");
    auto agent = fleet_.AddToken("agent", "node-a");
    ASSERT_TRUE(ops.ok() && slurm.ok() && agent.ok());
    slurm_ = *slurm;
    std::vector<std::string> flags = {
        "--tokens_file=" + fleet_.dir() + "/tokens", "--node_ttl=1h"};
    flags.insert(flags.end(), server_flags.begin(), server_flags.end());
    auto server = ServerProcess::Start(flags);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = grpc::CreateChannel(server_->address(),
                                       grpc::InsecureChannelCredentials());
    {
      grpc::ClientContext context;
      context.AddMetadata("authorization", "Bearer " + *ops);
      v1::RegisterVariantsRequest variants;
      variants.set_kernel("scale");
      variants.add_variants()->set_name("scale_cpu");
      variants.mutable_variants(0)->set_selector("device={kind(cpu)}");
      v1::RegisterVariantsResponse registered;
      const grpc::Status status =
          v1::Variants::NewStub(channel)->RegisterVariants(&context, variants,
                                                           &registered);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
    {
      grpc::ClientContext context;
      context.AddMetadata("authorization", "Bearer " + *agent);
      v1::ReportNodeRequest report;
      v1::Node* node = report.mutable_node();
      node->set_id("node-a");
      v1::Device* cpu = node->add_devices();
      cpu->set_index(-1);
      cpu->mutable_traits()->add_kind("cpu");
      cpu->mutable_traits()->add_kind("host");
      v1::ReportNodeResponse reported;
      const grpc::Status status = v1::Inventory::NewStub(channel)->ReportNode(
          &context, report, &reported);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
    target_port_ = server_->port();
    target_ = server_->address();
    if (!direct) {
      auto front = Front::Start({"CTXSEL_FRONT_BIND=proto h2",
                                 "CTXSEL_SERVER=" + server_->address(),
                                 "CTXSEL_SERVER_TLS=proto h2"});
      ASSERT_TRUE(front.ok()) << front.status();
      front_ = *std::move(front);
      target_port_ = front_->port();
      target_ = front_->address();
    }
  }

  int64_t ServerRss() {
    return ResidentBytes(server_->process().pid()).value_or(0);
  }

  TlsFleet fleet_;
  std::string slurm_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Front> front_;
  std::string target_;  // where clients connect: the front, or the server
  int target_port_ = 0;
};

// Figures of a 4 s rapid-reset flood from 4 connections.
struct RapidResetFigures {
  SelectRun before, during, after_first_2s, after_next_2s;
  int64_t streams = 0;
  int closed = 0;  // attacker connections the front or server ended
  int64_t rss_before = 0, rss_peak = 0, rss_after = 0;
};

RapidResetFigures RapidResetFlood(FloodTest& test, Launcher& launcher, int port,
                                  pid_t server) {
  RapidResetFigures figures;
  launcher.SelectFor(milliseconds(500));  // connected and warm
  figures.before = launcher.SelectFor(seconds(3));
  figures.rss_before = ResidentBytes(server).value_or(0);
  RssPeak peak(server);
  std::atomic<int64_t> streams{0};
  std::atomic<int> closed{0};
  std::vector<std::thread> attackers;
  for (int i = 0; i < 4; ++i) {
    attackers.emplace_back([&, port] {
      // The attackers stand for other hosts: on this one they yield the
      // CPU to the launcher, the front and the server.
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
      // A refused or ended connection is tried again every 100 ms until
      // the 4 s are up.
      const auto end = std::chrono::steady_clock::now() + seconds(4);
      while (std::chrono::steady_clock::now() < end) {
        auto connection = RawHttp2Connection::Connect(port, kAttacker);
        if (!connection.ok()) {
          std::this_thread::sleep_for(milliseconds(100));
          continue;
        }
        streams +=
            (*connection)
                ->RapidReset(kSelect,
                             std::chrono::duration_cast<milliseconds>(
                                 end - std::chrono::steady_clock::now()));
        closed += (*connection)->closed();
        std::this_thread::sleep_for(milliseconds(100));
      }
    });
  }
  figures.during = launcher.SelectFor(seconds(4));
  for (std::thread& attacker : attackers) attacker.join();
  figures.after_first_2s = launcher.SelectFor(seconds(2));
  figures.after_next_2s = launcher.SelectFor(seconds(2));
  figures.rss_peak = peak.Stop();
  figures.rss_after = ResidentBytes(server).value_or(0);
  figures.streams = streams;
  figures.closed = closed;
  return figures;
}

void Print(const char* where, const RapidResetFigures& f) {
  std::printf(
      "rapid reset %s: %ld streams opened and reset by 4 connections in 4 s "
      "(%d ended by the peer); Select %.0f/s before, %.0f/s during (%d/%d "
      "OK), %.0f/s 0-2 s after (%d/%d OK), %.0f/s 2-4 s after (%d/%d OK); "
      "server RSS %.1f MiB before, %.1f peak, %.1f after\n",
      where, static_cast<long>(f.streams), f.closed, f.before.per_second(),
      f.during.per_second(), f.during.ok, f.during.total,
      f.after_first_2s.per_second(), f.after_first_2s.ok,
      f.after_first_2s.total, f.after_next_2s.per_second(), f.after_next_2s.ok,
      f.after_next_2s.total, MiB(f.rss_before), MiB(f.rss_peak),
      MiB(f.rss_after));
  for (const SelectRun* run :
       {&f.before, &f.during, &f.after_first_2s, &f.after_next_2s}) {
    if (!run->first_error.ok()) {
      std::printf("  first failed Select: code %d: %s\n",
                  run->first_error.error_code(),
                  run->first_error.error_message().c_str());
    }
  }
}

TEST_F(FloodTest, RapidResetThroughTheFrontLeavesSelectItsRate) {
  Start(/*direct=*/false);
  if (HasFatalFailure()) return;
  Launcher launcher(target_, slurm_);
  const RapidResetFigures f =
      RapidResetFlood(*this, launcher, target_port_, server_->process().pid());
  Print("through the front", f);
  EXPECT_GT(f.streams, 1000);  // the attack ran
  EXPECT_GT(f.before.total, 20);
  EXPECT_GT(f.during.per_second(), 0.5 * f.before.per_second());
  // From 2 s after the flood on, every Select succeeds again. (Its rate is
  // held to half of the rate before only: this machine's other load moves
  // it by more than the flood does.)
  EXPECT_EQ(f.after_next_2s.ok, f.after_next_2s.total);
  EXPECT_GT(f.after_next_2s.per_second(), 0.5 * f.before.per_second());
  // Nothing of the flood reaches the server's memory.
  EXPECT_LT(f.rss_peak, f.rss_before + (64 << 20));
  EXPECT_TRUE(front_->process().Running()) << front_->Log();
}

// Issue 23's figures, straight at the server: it takes GBs, so it runs
// only when asked (see the file comment).
TEST_F(FloodTest, DISABLED_RapidResetStraightAtTheServer) {
  Start(/*direct=*/true);
  if (HasFatalFailure()) return;
  Launcher launcher(target_, slurm_);
  Print("straight at the server", RapidResetFlood(*this, launcher, target_port_,
                                                  server_->process().pid()));
}

// The tightest limits gRPC 1.51 offers (no channel argument counts
// resets): one stream per connection, a 256 MiB quota, 1 KiB of headers.
TEST_F(FloodTest, DISABLED_RapidResetStraightAtTheServerWithTightLimits) {
  Start(/*direct=*/true,
        {"--max_concurrent_streams=1", "--max_grpc_memory_bytes=268435456",
         "--max_header_list_bytes=1024"});
  if (HasFatalFailure()) return;
  Launcher launcher(target_, slurm_);
  Print(
      "straight at the server, tightest gRPC 1.51 limits",
      RapidResetFlood(*this, launcher, target_port_, server_->process().pid()));
}

// A header block that never ends: the front keeps at most one buffer
// (16 KiB) of it and ends the connection; gRPC 1.51 kept all of it.
int64_t FloodContinuation(FloodTest& test, int port, pid_t pid,
                          const char* where, bool* closed) {
  const int64_t rss_before = ResidentBytes(pid).value_or(0);
  auto attacker = RawHttp2Connection::Connect(port, kAttacker);
  EXPECT_TRUE(attacker.ok()) << attacker.status();
  if (!attacker.ok()) return 0;
  const int64_t sent =
      (*attacker)->ContinuationFlood(kSelect, int64_t{64} << 20, seconds(2));
  const int64_t rss_after = ResidentBytes(pid).value_or(0);
  *closed = (*attacker)->closed();
  std::printf(
      "CONTINUATION flood %s: %.2f MiB of one header block sent, connection "
      "%s; server RSS %.1f -> %.1f MiB\n",
      where, MiB(sent), *closed ? "ended by the peer" : "still open",
      MiB(rss_before), MiB(rss_after));
  return sent;
}

TEST_F(FloodTest, ContinuationFloodEndsAtTheFront) {
  Start(/*direct=*/false);
  if (HasFatalFailure()) return;
  const pid_t pid = server_->process().pid();
  const int64_t rss_before = ResidentBytes(pid).value_or(0);
  bool closed = false;
  const int64_t sent =
      FloodContinuation(*this, target_port_, pid, "through the front", &closed);
  // What was sent is mostly the sockets' buffers (loopback's are MiBs):
  // the front read at most one 16 KiB buffer of it.
  EXPECT_TRUE(closed);
  EXPECT_LT(sent, 16 << 20);
  EXPECT_LT(ServerRss(), rss_before + (8 << 20));
  EXPECT_LT(ResidentBytes(front_->process().pid()).value_or(0), 64 << 20);
  Launcher launcher(target_, slurm_);
  EXPECT_TRUE(launcher.Select().ok());
}

TEST_F(FloodTest, DISABLED_ContinuationFloodStraightAtTheServer) {
  Start(/*direct=*/true);
  if (HasFatalFailure()) return;
  bool closed = false;
  FloodContinuation(*this, target_port_, server_->process().pid(),
                    "straight at the server", &closed);
}

// The front passes on the client certificate it verified, in a header the
// server reads only from the front's own certificate (--front_identity);
// tokens pass as they are.
TEST(TlsFrontE2E, ServerTrustsTheFrontsClientCertificateHeaderOnly) {
  absl::StatusOr<TlsFleet> fleet = TlsFleet::Make({"node-a", "ctxsel-front"});
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_TRUE(fleet->AddToken("launcher", "slurm").ok());
  const std::string dir = fleet->dir();
  // HAProxy takes a certificate and its key in one file.
  for (const auto& [out, name] :
       {std::pair<std::string, std::string>{"front.pem", "server"},
        {"front-client.pem", "ctxsel-front"}}) {
    std::ofstream(dir + "/" + out)
        << ReadFileOrEmpty(dir + "/" + name + ".pem")
        << ReadFileOrEmpty(dir + "/" + name + ".key");
  }
  std::vector<std::string> flags = fleet->ServerFlags();
  flags.push_back("--front_identity=ctxsel-front");
  flags.push_back("--node_ttl=1h");
  auto server = ServerProcess::Start(flags);
  ASSERT_TRUE(server.ok()) << server.status();
  // The front's variables as docs/deployment.md's front.env sets them,
  // with this test's files and server.
  std::vector<std::string> env;
  std::istringstream page(ReadFileOrEmpty(RunfilePath("docs/deployment.md")));
  for (std::string line; std::getline(page, line);) {
    if (!absl::StartsWith(line, "CTXSEL_")) continue;
    line = absl::StrReplaceAll(line, {{"\"", ""}, {"/etc/ctxsel/", dir + "/"}});
    if (absl::StartsWith(line, "CTXSEL_SERVER=")) {
      line = "CTXSEL_SERVER=" + (*server)->address();
    }
    env.push_back(line);
  }
  ASSERT_EQ(env.size(), 4u) << "docs/deployment.md: front.env's lines";
  auto front = Front::Start(env);
  ASSERT_TRUE(front.ok()) << front.status();

  v1::Node node;
  node.set_id("node-a");
  v1::Device* cpu = node.add_devices();
  cpu->set_index(-1);
  cpu->mutable_traits()->add_kind("cpu");
  cpu->mutable_traits()->add_kind("host");
  // ReportNode of `id` over `channel`, with `header` as
  // x-ctxsel-client-cert unless empty.
  auto report = [&](std::shared_ptr<grpc::Channel> channel,
                    const std::string& id, const std::string& header) {
    grpc::ClientContext context;
    if (!header.empty()) context.AddMetadata("x-ctxsel-client-cert", header);
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ReportNodeRequest request;
    *request.mutable_node() = node;
    request.mutable_node()->set_id(id);
    v1::ReportNodeResponse response;
    return v1::Inventory::NewStub(channel)
        ->ReportNode(&context, request, &response)
        .error_code();
  };
  const std::string at_front = (*front)->address();
  const std::string at_server = (*server)->address();
  // node-a's certificate, verified by the front, names node-a.
  EXPECT_EQ(
      report(fleet->Channel(at_front, fleet->Cert("node-a")), "node-a", ""),
      grpc::StatusCode::OK)
      << (*front)->Log() << (*server)->Log();
  // The front drops a client's own header: no certificate, no node.
  EXPECT_EQ(
      report(fleet->Channel(at_front, fleet->Anonymous()), "node-a", "node-a"),
      grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(report(fleet->Channel(at_front, fleet->Cert("node-a")), "node-b",
                   "node-b"),
            grpc::StatusCode::PERMISSION_DENIED);
  // Straight at the server the header is never read...
  EXPECT_EQ(
      report(fleet->Channel(at_server, fleet->Anonymous()), "node-a", "node-a"),
      grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(report(fleet->Channel(at_server, fleet->Cert("node-a")), "node-b",
                   "node-b"),
            grpc::StatusCode::PERMISSION_DENIED);
  // ...and the front's own certificate names nobody.
  EXPECT_EQ(report(fleet->Channel(at_server, fleet->Cert("ctxsel-front")),
                   "ctxsel-front", ""),
            grpc::StatusCode::UNAUTHENTICATED);
  // A stream whose first message comes late (an agent beats after one
  // heartbeat interval) still reaches the server.
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    auto inventory =
        v1::Inventory::NewStub(fleet->Channel(at_front, fleet->Cert("node-a")));
    auto beats = inventory->Heartbeat(&context);
    std::this_thread::sleep_for(seconds(2));
    v1::HeartbeatRequest beat;
    beat.set_node("node-a");
    v1::HeartbeatResponse answer;
    EXPECT_TRUE(beats->Write(beat) && beats->Read(&answer));
    beats->WritesDone();
    context.TryCancel();
  }
  // A launcher's token passes through the front as it is.
  client::CtxselClient launcher(fleet->Channel(at_front, fleet->Token("slurm")),
                                milliseconds(5000));
  absl::StatusOr<std::vector<v1::NodeSummary>> nodes =
      launcher.ListNodes(false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].node().id(), "node-a");
}

// gRPC core logs a bad header with its value (hpack_parser.cc: "Error
// parsing metadata: ... value=..."); before its lines went through the
// server's logger, a newline in a raw header's value started a line of the
// attacker's choosing in the server's log.
TEST(GrpcCoreLogE2E, ARawHeaderCannotForgeALogLine) {
  auto server = ServerProcess::Start({"--node_ttl=1h"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto attacker = RawHttp2Connection::Connect((*server)->port());
  ASSERT_TRUE(attacker.ok()) << attacker.status();
  const std::string forged =
      "[2026-01-01 00:00:00.000] [ctxsel-server] [info] forged";
  (*attacker)->OpenCall("/ctxsel.v1.Ctxsel/Ping", 0, 0,
                        {{"grpc-timeout", "1S\n" + forged}});
  (*attacker)->Pump(seconds(2));
  std::string log;
  const auto end = std::chrono::steady_clock::now() + seconds(5);
  while ((log = (*server)->Log()).find("grpc-timeout") == std::string::npos &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_THAT(log, HasSubstr("key=grpc-timeout value=1S\\n" + forged));
  EXPECT_THAT(log, Not(HasSubstr("\n" + forged)));
}

}  // namespace
}  // namespace ctxsel::testing
