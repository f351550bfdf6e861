// The security model end to end (docs/security.md): a TLS server with client
// certificates and role tokens, certificates made by openssl at test time.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/channel_credentials.h"
#include "base/error_reasons.h"
#include "base/status_details.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

// The ErrorInfo reason the server sent with an error (every error has one,
// in domain ctxsel.dev); "" when none came.
std::string Reason(const absl::Status& status) {
  std::optional<google::rpc::ErrorInfo> info =
      GetDetail<google::rpc::ErrorInfo>(status);
  if (!info.has_value() || info->domain() != kErrorDomain) return "";
  return info->reason();
}

using ::testing::HasSubstr;
using ::testing::Not;

// Everything the suite shares: certificates, tokens and one server.
struct Fleet {
  std::string dir;
  std::string rogue_dir;  // another CA, with its own "node-a" certificate
  std::map<std::string, std::string> tokens;  // name -> token
  std::unique_ptr<ServerProcess> server;
};
Fleet* fleet = nullptr;

void MakeCerts(const std::string& dir, const std::vector<std::string>& nodes) {
  std::vector<std::string> argv = {"/bin/bash",
                                   RunfilePath("tools/make_certs.sh"), dir};
  argv.insert(argv.end(), nodes.begin(), nodes.end());
  CommandResult made = RunCommand(argv);
  ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
}

// `ctxsel-cli admin token`: the token (stdout) is kept, its line (stderr)
// appended to the tokens file.
void AddToken(const std::string& role, const std::string& name) {
  CommandResult made = RunCommand(
      {CliPath(), "admin", "token", "--role=" + role, "--name=" + name});
  ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  std::string token = made.stdout_text.substr(0, made.stdout_text.find('\n'));
  ASSERT_THAT(made.stderr_text, Not(HasSubstr(token)));
  std::ofstream(fleet->dir + "/tokens", std::ios::app) << made.stderr_text;
  std::ofstream(absl::StrCat(fleet->dir, "/", name, ".token")) << token << "\n";
  fleet->tokens[name] = token;
}

class SecurityE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fleet = new Fleet;
    fleet->dir = MakeTempDir("security");
    fleet->rogue_dir = MakeTempDir("rogue");
    MakeCerts(fleet->dir, {"node-a", "node-b", "node-c", "pvc"});
    MakeCerts(fleet->rogue_dir, {"node-a"});
    AddToken("admin", "ops");
    AddToken("reader", "dashboard");
    AddToken("launcher", "slurm");
    AddToken("launcher", "k8s");
    const std::string& d = fleet->dir;
    auto server = ServerProcess::Start(
        {"--tls_cert=" + d + "/server.pem", "--tls_key=" + d + "/server.key",
         "--client_ca=" + d + "/ca.pem", "--tokens_file=" + d + "/tokens"});
    ASSERT_TRUE(server.ok()) << server.status();
    fleet->server = *std::move(server);
  }
  static void TearDownTestSuite() {
    delete fleet;
    fleet = nullptr;
  }

  void SetUp() override { ASSERT_NE(fleet->server, nullptr); }

  // A client of the test server with `security` (ca_file defaults to the
  // fleet's CA).
  static std::shared_ptr<grpc::Channel> Channel(ClientSecurity security) {
    if (!security.insecure && security.ca_file.empty()) {
      security.ca_file = fleet->dir + "/ca.pem";
    }
    auto credentials = MakeChannelCredentials(security);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    return grpc::CreateChannel(fleet->server->address(), *credentials);
  }
  static std::unique_ptr<client::CtxselClient> WithToken(
      const std::string& name) {
    ClientSecurity security;
    security.token_file = absl::StrCat(fleet->dir, "/", name, ".token");
    return std::make_unique<client::CtxselClient>(Channel(security));
  }
  static std::unique_ptr<client::CtxselClient> WithCert(
      const std::string& dir, const std::string& node) {
    ClientSecurity security;
    security.cert_file = absl::StrCat(dir, "/", node, ".pem");
    security.key_file = absl::StrCat(dir, "/", node, ".key");
    return std::make_unique<client::CtxselClient>(Channel(security));
  }
  static v1::Node CpuNode(const std::string& id) {
    v1::Node node;
    node.set_id(id);
    v1::Device* cpu = node.add_devices();
    cpu->set_index(-1);
    cpu->mutable_traits()->add_kind("cpu");
    cpu->mutable_traits()->add_kind("host");
    cpu->mutable_traits()->add_arch("x86_64");
    return node;
  }
};

TEST_F(SecurityE2E, PlaintextClientIsRefused) {
  ClientSecurity security;
  security.insecure = true;
  client::CtxselClient plain(Channel(security));
  EXPECT_EQ(plain.Ping().status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(SecurityE2E, CertificateFromAnotherCaIsRefused) {
  EXPECT_TRUE(WithCert(fleet->dir, "node-a")->Ping().ok());
  absl::Status rogue = WithCert(fleet->rogue_dir, "node-a")->Ping().status();
  EXPECT_EQ(rogue.code(), absl::StatusCode::kUnavailable) << rogue;
}

TEST_F(SecurityE2E, AgentActsOnlyForItsOwnNode) {
  auto node_a = WithCert(fleet->dir, "node-a");
  auto node_b = WithCert(fleet->dir, "node-b");
  ASSERT_TRUE(node_b->ReportNode(CpuNode("node-b")).ok());
  ASSERT_TRUE(node_a->ReportNode(CpuNode("node-a")).ok());

  absl::Status report = node_a->ReportNode(CpuNode("node-b")).status();
  EXPECT_EQ(report.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Reason(report), kReasonNodeIdentityMismatch);
  EXPECT_THAT(report.message(), HasSubstr("'node-a'"));
  EXPECT_THAT(report.message(), HasSubstr("'node-b'"));
  absl::Status deregister = node_a->Deregister("node-b");
  EXPECT_EQ(deregister.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Reason(deregister), kReasonNodeIdentityMismatch);

  // Heartbeating keeps a node alive: node-a cannot do it for node-b.
  auto stream = node_a->OpenHeartbeat();
  v1::HeartbeatRequest beat;
  beat.set_node("node-b");
  absl::Status beat_status = stream->Beat(beat).status();
  EXPECT_EQ(beat_status.code(), absl::StatusCode::kPermissionDenied)
      << beat_status;

  // node-b is still there, and agents may not list the fleet.
  auto nodes = WithToken("dashboard")->ListNodes(false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(node_a->ListNodes(false).status().code(),
            absl::StatusCode::kPermissionDenied);
  bool has_b = false;
  for (const v1::NodeSummary& n : *nodes) has_b |= n.node().id() == "node-b";
  EXPECT_TRUE(has_b);
}

TEST_F(SecurityE2E, RolesDecideWhoMayRegister) {
  v1::RegisterVariantsRequest request;
  request.set_kernel("scale");
  v1::Variant* variant = request.add_variants();
  variant->set_name("scale_cpu");
  variant->set_selector("device={kind(cpu)}");

  absl::Status reader =
      WithToken("dashboard")->RegisterVariants(request).status();
  EXPECT_EQ(reader.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Reason(reader), kReasonRoleForbidden);
  EXPECT_THAT(reader.message(), HasSubstr("role reader"));

  ClientSecurity none;  // TLS, but neither token nor certificate
  absl::Status anonymous =
      client::CtxselClient(Channel(none)).RegisterVariants(request).status();
  EXPECT_EQ(anonymous.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Reason(anonymous), kReasonCredentialsMissing);

  EXPECT_TRUE(WithToken("ops")->RegisterVariants(request).ok());
  EXPECT_TRUE(WithToken("dashboard")->ListVariants("scale").ok());
}

TEST_F(SecurityE2E, HealthNeedsNoCredentials) {
  ClientSecurity none;
  auto health = grpc::health::v1::Health::NewStub(Channel(none));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(SecurityE2E, LauncherCannotReleaseAnotherLaunchersClaim) {
  ASSERT_TRUE(
      WithCert(fleet->dir, "node-a")->ReportNode(CpuNode("node-a")).ok());
  v1::RegisterVariantsRequest variants;
  variants.set_kernel("claimed");
  v1::Variant* variant = variants.add_variants();
  variant->set_name("claimed_cpu");
  variant->set_selector("device={kind(cpu)}");
  ASSERT_TRUE(WithToken("ops")->RegisterVariants(variants).ok());

  v1::SelectRequest select;
  select.mutable_job()->set_kernel("claimed");
  select.mutable_claim()->mutable_duration()->set_seconds(60);
  select.mutable_claim()->set_holder("job-1");
  auto slurm = WithToken("slurm");
  auto claimed = slurm->Select(select);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string id = claimed->claim().id();

  auto k8s = WithToken("k8s");
  absl::Status stolen = k8s->ReleaseClaim(id);
  EXPECT_EQ(stolen.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Reason(stolen), kReasonClaimNotOwned);
  EXPECT_THAT(stolen.message(), HasSubstr("'slurm'"));
  EXPECT_EQ(k8s->RenewClaim(id, std::chrono::minutes(1)).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(slurm->RenewClaim(id, std::chrono::minutes(1)).ok());
  EXPECT_TRUE(slurm->ReleaseClaim(id).ok());
}

TEST_F(SecurityE2E, SighupRereadsTheTokensFile) {
  AddToken("reader", "late");
  EXPECT_EQ(WithToken("late")->Ping().status().code(),
            absl::StatusCode::kUnauthenticated);
  fleet->server->process().Signal(SIGHUP);
  absl::Status ping;
  for (int i = 0; i < 200; ++i) {  // bounded: the reload is asynchronous
    ping = WithToken("late")->Ping().status();
    if (ping.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(ping.ok()) << ping;
}

TEST_F(SecurityE2E, CliTakesTheSameFlags) {
  const std::string& d = fleet->dir;
  CommandResult ping = RunCommand(
      {CliPath(), "--server=" + fleet->server->address(),
       "--ca=" + d + "/ca.pem", "--token_file=" + d + "/ops.token", "ping"});
  EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
  CommandResult refused =
      RunCommand({CliPath(), "--server=" + fleet->server->address(),
                  "--insecure", "--token_file=" + d + "/ops.token", "ping"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.stderr_text, HasSubstr("only over TLS"));
}

TEST_F(SecurityE2E, ReportFloodExhaustsOnlyThatNode) {
  // The server's default: 60 reports per minute per node.
  auto node_c = WithCert(fleet->dir, "node-c");
  absl::Status report;
  int accepted = 0;
  for (int i = 0; i < 70 && report.ok(); ++i) {
    report = node_c->ReportNode(CpuNode("node-c")).status();
    if (report.ok()) ++accepted;
  }
  EXPECT_EQ(report.code(), absl::StatusCode::kResourceExhausted) << report;
  EXPECT_THAT(report.message(), HasSubstr("'node-c'"));
  EXPECT_GE(accepted, 60);
  EXPECT_TRUE(
      WithCert(fleet->dir, "node-b")->ReportNode(CpuNode("node-b")).ok());
}

// The agent binary with its flags (docs/security.md): it reports with its
// certificate; with another node's certificate it is refused.
TEST_F(SecurityE2E, AgentReportsWithItsCertificate) {
  const std::string& d = fleet->dir;
  auto agent = [&](const std::string& cert, const std::string& log) {
    return Subprocess::Start(
        {RunfilePath("agent/ctxsel-agent"),
         "--server=" + fleet->server->address(), "--node_id=pvc", "--backends=",
         "--devices_file=" + RunfilePath("tools/fixtures/fleet/pvc.json"),
         "--heartbeat=200ms", "--ca=" + d + "/ca.pem",
         "--tls_cert=" + d + "/" + cert + ".pem",
         "--tls_key=" + d + "/" + cert + ".key"},
        log, log);
  };
  const std::string impostor_log = d + "/impostor.log";
  auto impostor = agent("node-a", impostor_log);
  ASSERT_TRUE(impostor.ok()) << impostor.status();
  auto reader = WithToken("dashboard");
  bool refused = false;
  for (int i = 0; i < 250 && !refused; ++i) {  // bounded: up to 5 s
    refused =
        absl::StrContains(ReadFileOrEmpty(impostor_log), "PERMISSION_DENIED");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(refused) << ReadFileOrEmpty(impostor_log);
  EXPECT_TRUE(reader->ListDevices("", "pvc")->empty());
  (*impostor)->Signal(SIGTERM);
  (*impostor)->Wait(std::chrono::seconds(5));

  auto real = agent("pvc", d + "/pvc.log");
  ASSERT_TRUE(real.ok()) << real.status();
  size_t devices = 0;
  for (int i = 0; i < 250 && devices == 0; ++i) {
    auto listed = reader->ListDevices("", "pvc");
    if (listed.ok()) devices = listed->size();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(devices, 0u) << ReadFileOrEmpty(d + "/pvc.log");
  (*real)->Signal(SIGTERM);
  EXPECT_EQ((*real)->Wait(std::chrono::seconds(5)), 0);
}

// Refused calls are logged with the caller's address, a line a second at
// most, so a flood shows in the log without flooding it.
TEST_F(SecurityE2E, RefusedCallsAreLoggedAtMostOnceASecond) {
  auto count = [] {
    const std::string log = fleet->server->Log();
    size_t lines = 0;
    for (size_t at = log.find("auth: refused "); at != std::string::npos;
         at = log.find("auth: refused ", at + 1)) {
      ++lines;
    }
    return lines;
  };
  ClientSecurity none;  // TLS, but neither token nor certificate
  client::CtxselClient anonymous(Channel(none));
  const size_t before = count();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(anonymous.Ping().status().code(),
              absl::StatusCode::kUnauthenticated);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_EQ(anonymous.Ping().status().code(),
            absl::StatusCode::kUnauthenticated);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const size_t lines = count() - before;
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, static_cast<size_t>(seconds) + 2);
  const std::string log = fleet->server->Log();
  EXPECT_THAT(log, HasSubstr("auth: refused Ctxsel/Ping from ipv4:127.0.0.1:"));
  EXPECT_THAT(log, HasSubstr("UNAUTHENTICATED: no credentials"));
  EXPECT_THAT(log, HasSubstr(" more refused since the previous line"));
}

// Last in the file: every other test has logged what it will.
TEST_F(SecurityE2E, NoLogHoldsAToken) {
  const std::string log = fleet->server->Log();
  ASSERT_THAT(log, HasSubstr("TLS, mTLS"));
  for (const auto& [name, token] : fleet->tokens) {
    EXPECT_THAT(log, Not(HasSubstr(token))) << name;
  }
}

// A replica list over TLS (docs/deployment.md): each replica is verified
// against its own host name, not against the whole list, and a client moves
// past one that is down. The first entry listens nowhere.
TEST_F(SecurityE2E, TlsReplicaListsVerifyEachReplicaByItsOwnName) {
  const std::string& d = fleet->dir;
  const std::string port =
      fleet->server->address().substr(fleet->server->address().rfind(':') + 1);
  const std::string list = "127.0.0.1:1,localhost:" + port;
  CommandResult ping =
      RunCommand({CliPath(), "--server=" + list, "--ca=" + d + "/ca.pem",
                  "--token_file=" + d + "/ops.token", "ping"});
  EXPECT_EQ(ping.exit_code, 0) << ping.stdout_text << ping.stderr_text;

  const std::string log = d + "/list_agent.log";
  auto agent = Subprocess::Start(
      {RunfilePath("agent/ctxsel-agent"), "--server=" + list,
       "--node_id=node-b", "--backends=",
       "--devices_file=" + RunfilePath("tools/fixtures/fleet/pvc.json"),
       "--heartbeat=200ms", "--ca=" + d + "/ca.pem",
       "--tls_cert=" + d + "/node-b.pem", "--tls_key=" + d + "/node-b.key"},
      log, log);
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto reader = WithToken("dashboard");
  size_t devices = 0;
  for (int i = 0; i < 500 && devices == 0; ++i) {  // bounded: up to 10 s
    auto listed = reader->ListDevices("", "node-b");
    devices = listed.ok() ? listed->size() : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(devices, 0u) << ReadFileOrEmpty(log);
  (*agent)->Signal(SIGTERM);
  (*agent)->Wait(std::chrono::seconds(5));
}

}  // namespace
}  // namespace ctxsel::testing
