// A real Prometheus (Debian's /usr/bin/prometheus, loopback, a temporary
// directory, 1 s scrapes) scrapes a real ctxsel-server and a real
// ctxsel-agent under a little traffic; the test asks Prometheus's HTTP API for
// each key series, so the names, labels and values are checked as an operator's
// queries see them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

constexpr char kPrometheus[] = "/usr/bin/prometheus";
// Prometheus takes a few seconds to start on a busy 2-core machine, and a
// series appears one scrape (1 s) after its change.
constexpr auto kPrometheusStart = std::chrono::seconds(90);
constexpr auto kSeriesWait = std::chrono::seconds(30);

// A port free on 127.0.0.1 now (bound to port 0, then let go).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  return ntohs(addr.sin_port);
}

// The body of GET `path` from 127.0.0.1:port; nullopt when it cannot connect
// or the status is not 200.
std::optional<std::string> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return std::nullopt;
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buffer[8192];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) {
    response.append(buffer, n);
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.1 200", 0) != 0 &&
      response.rfind("HTTP/1.0 200", 0) != 0) {
    return std::nullopt;
  }
  return body == std::string::npos ? "" : response.substr(body + 4);
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

int ReadPortFile(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + kSeriesWait;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    int port = 0;
    if (in >> port && port > 0) return port;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

class PrometheusE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kPrometheus, X_OK) != 0) {
      GTEST_SKIP() << kPrometheus << " is not installed (tools/setup.sh)";
    }
    const std::string dir = MakeTempDir("ops");
    const std::string metrics_port_file = dir + "/metrics_port";
    auto server = ServerProcess::Start(
        {"--data_dir=" + dir + "/data", "--metrics_listen=127.0.0.1:0",
         "--metrics_port_file=" + metrics_port_file, "--node_ttl=10m",
         "--suspect_after=5m"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    metrics_port_ = ReadPortFile(metrics_port_file);
    ASSERT_GT(metrics_port_, 0);

    // An agent discovering this machine's host CPU, beating every 200 ms.
    const std::string agent_port_file = dir + "/agent_metrics_port";
    agent_log_ = dir + "/agent.log";
    auto agent = Subprocess::Start(
        {RunfilePath("agent/ctxsel-agent"), "--insecure",
         "--server=" + server_->address(), "--node_id=agent-1",
         "--backends=cpu", "--heartbeat=200ms", "--metrics_listen=127.0.0.1:0",
         "--metrics_port_file=" + agent_port_file},
        agent_log_, agent_log_);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    agent_metrics_port_ = ReadPortFile(agent_port_file);
    ASSERT_GT(agent_metrics_port_, 0) << ReadFileOrEmpty(agent_log_);

    prometheus_port_ = FreePort();
    const std::string config = dir + "/prometheus.yml";
    std::ofstream(config) << "global:\n"
                          << "  scrape_interval: 1s\n"
                          << "scrape_configs:\n"
                          << "  - job_name: ctxsel-server\n"
                          << "    static_configs:\n"
                          << "      - targets: ['127.0.0.1:" << metrics_port_
                          << "']\n"
                          << "  - job_name: ctxsel-agent\n"
                          << "    static_configs:\n"
                          << "      - targets: ['127.0.0.1:"
                          << agent_metrics_port_ << "']\n";
    prometheus_log_ = dir + "/prometheus.log";
    auto prometheus = Subprocess::Start(
        {kPrometheus, "--config.file=" + config,
         "--storage.tsdb.path=" + dir + "/tsdb",
         absl::StrCat("--web.listen-address=127.0.0.1:", prometheus_port_)},
        prometheus_log_, prometheus_log_);
    ASSERT_TRUE(prometheus.ok()) << prometheus.status();
    prometheus_ = *std::move(prometheus);
    const auto deadline = std::chrono::steady_clock::now() + kPrometheusStart;
    while (!HttpGet(prometheus_port_, "/-/ready").has_value()) {
      ASSERT_TRUE(prometheus_->Running()) << ReadFileOrEmpty(prometheus_log_);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "prometheus not ready: " << ReadFileOrEmpty(prometheus_log_);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  void TearDown() override {
    if (prometheus_ != nullptr) {
      prometheus_->Signal(SIGTERM);
      if (!prometheus_->Wait(std::chrono::seconds(20)).has_value()) {
        prometheus_->Signal(SIGKILL);  // the destructor reaps it
      }
    }
  }

  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }

  // The value of the one-series instant `query`, once Prometheus has a
  // series for it that satisfies `done` (or the last seen, at the deadline).
  std::optional<double> Query(const std::string& query,
                              const std::function<bool(double)>& done) {
    std::optional<double> last;
    const auto deadline = std::chrono::steady_clock::now() + kSeriesWait;
    while (std::chrono::steady_clock::now() < deadline) {
      std::optional<std::string> body =
          HttpGet(prometheus_port_, "/api/v1/query?query=" + UrlEncode(query));
      if (body.has_value()) {
        nlohmann::json answer = nlohmann::json::parse(*body, nullptr, false);
        if (!answer.is_discarded() && answer["status"] == "success" &&
            answer["data"]["result"].size() == 1) {
          last = std::stod(
              answer["data"]["result"][0]["value"][1].get<std::string>());
          if (done(*last)) return last;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return last;
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
  std::string agent_log_;
  int agent_metrics_port_ = 0;
  std::unique_ptr<Subprocess> prometheus_;
  std::string prometheus_log_;
  int metrics_port_ = 0;
  int prometheus_port_ = 0;
};

TEST_F(PrometheusE2E, ScrapedSeriesFollowTheTraffic) {
  auto client = client::CtxselClient::Connect(server_->address());
  // Two simulated nodes besides the agent's (so three reports in all).
  for (const v1::Node& node :
       {GpuNode("gpu-nv", "nvidia", "nvptx", "nvidia_gpu_sm_90", 2),
        CpuNode("cpu-1")}) {
    auto reported = client->ReportNode(node);
    ASSERT_TRUE(reported.ok()) << reported.status();
  }
  CommandResult reg =
      Cli({"variants", "register", "saxpy",
           "saxpy_nv=construct={target}, device={arch(nvptx)}"});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  CommandResult selected =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--format=env"});
  ASSERT_EQ(selected.exit_code, 0) << selected.stderr_text;
  CommandResult unknown = Cli({"select", "--kernel=no_such_kernel"});
  ASSERT_NE(unknown.exit_code, 0);
  // A watcher gets the three nodes as they are, then leaves.
  CommandResult watch = Cli({"watch", "--initial", "--max_events=3"});
  ASSERT_EQ(watch.exit_code, 0) << watch.stderr_text;
  // Two GPUs take one claim each; the third claim finds them all taken.
  for (int i = 0; i < 3; ++i) {
    Cli({"select", "--kernel=saxpy", "--construct=target",
         "--device_filter=device={arch(nvptx)}", "--claim=5m"});
  }

  const auto at_least = [](double want) {
    return [want](double v) { return v >= want; };
  };
  const auto equal = [](double want) {
    return [want](double v) { return v == want; };
  };
  const struct {
    std::string query;
    std::function<bool(double)> done;
  } expectations[] = {
      {R"(ctxsel_rpc_requests_total{method="/ctxsel.v1.Placement/Select",code="OK"})",
       at_least(3)},
      {R"(ctxsel_rpc_requests_total{method="/ctxsel.v1.Placement/Select",code="NOT_FOUND"})",
       equal(1)},
      {R"(ctxsel_rpc_requests_total{method="/ctxsel.v1.Inventory/ReportNode",code="OK"})",
       equal(3)},
      {R"(ctxsel_rpc_duration_seconds_count{method="/ctxsel.v1.Placement/Select"})",
       equal(5)},
      {R"(ctxsel_selections_total{outcome="variant",policy="least_loaded"})",
       equal(3)},
      {R"(ctxsel_selections_total{outcome="none",policy="least_loaded"})",
       equal(1)},
      {R"(ctxsel_selections_total{outcome="claimed_out",policy="least_loaded"})",
       equal(1)},
      // gpu-nv (host CPU and 2 GPUs), cpu-1, and the agent's host CPU.
      {R"(ctxsel_nodes{state="healthy"})", equal(3)},
      {R"(ctxsel_devices{state="healthy"})", equal(5)},
      {R"(ctxsel_heartbeats_total{answer="recorded"})", at_least(2)},
      {R"(ctxsel_nodes{state="suspect"})", equal(0)},
      {R"(ctxsel_claims_active)", equal(2)},
      {R"(ctxsel_claims_expired_total)", equal(0)},
      {R"(ctxsel_heartbeats_late_total)", equal(0)},
      {R"(ctxsel_store_write_duration_seconds_count{what="variants"})",
       equal(1)},
      {R"(ctxsel_store_write_duration_seconds_count{what="claims"})", equal(2)},
      {R"(ctxsel_nodes_expired_total)", equal(0)},
      {R"(ctxsel_watch_lag_seconds_count)", at_least(3)},
      {R"(ctxsel_watchers)", equal(0)},
      // The first Select resolves saxpy for its signature; the rest hit.
      {R"(ctxsel_resolution_cache_lookups_total{result="hit"})", at_least(1)},
      {R"(ctxsel_resolution_cache_lookups_total{result="miss"})", at_least(1)},
      {R"(ctxsel_resolution_rebuilds_total)", at_least(1)},
      {R"(up{job="ctxsel-server"})", equal(1)},
      {R"(up{job="ctxsel-agent"})", equal(1)},
      {R"(ctxsel_agent_reports_total)", equal(1)},
      {R"(ctxsel_agent_heartbeats_sent_total)", at_least(2)},
      {R"(ctxsel_agent_discovery_duration_seconds_count)", at_least(2)},
      {R"(ctxsel_agent_reconnects_total)", equal(0)},
  };
  for (const auto& expectation : expectations) {
    std::optional<double> value = Query(expectation.query, expectation.done);
    ASSERT_TRUE(value.has_value())
        << "no series for " << expectation.query << "; prometheus log:\n"
        << ReadFileOrEmpty(prometheus_log_) << "\nagent log:\n"
        << ReadFileOrEmpty(agent_log_);
    EXPECT_TRUE(expectation.done(*value))
        << expectation.query << " = " << *value;
  }
}

}  // namespace
}  // namespace ctxsel::testing
