#include "base/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

// The body of GET /metrics from 127.0.0.1:port ("" if it cannot connect).
std::string Scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const timeval timeout{.tv_sec = 15, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string request =
      "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) {
    response.append(buffer, n);
  }
  close(fd);
  return response;
}

TEST(MetricsEndpointTest, ServesCollectablesInTextFormat) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("ctxsel_test_total")
      .Help("A test counter.")
      .Register(*registry)
      .Add({{"what", "x"}})
      .Increment(3);
  auto endpoint = MetricsEndpoint::Start("127.0.0.1:0", {registry});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  ASSERT_GT((*endpoint)->port(), 0);
  const std::string response = Scrape((*endpoint)->port());
  EXPECT_NE(response.find("ctxsel_test_total{what=\"x\"} 3"), std::string::npos)
      << response;
}

TEST(MetricsEndpointTest, AnIdleClientDoesNotHoldOffScrapes) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("ctxsel_test_total")
      .Help("A test counter.")
      .Register(*registry)
      .Add({})
      .Increment();
  auto endpoint = MetricsEndpoint::Start("127.0.0.1:0", {registry});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  // A client that connects and sends nothing.
  const int idle = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((*endpoint)->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(idle, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  usleep(100 * 1000);  // accepted, and waiting for its request
  const auto start = std::chrono::steady_clock::now();
  const std::string response = Scrape((*endpoint)->port());
  const auto took = std::chrono::steady_clock::now() - start;
  close(idle);
  EXPECT_NE(response.find("ctxsel_test_total"), std::string::npos);
  EXPECT_LT(took, std::chrono::seconds(1));
}

TEST(MetricsEndpointTest, LoopbackAddresses) {
  for (const char* address : {"127.0.0.1:9464", "[::1]:0", "localhost:1"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:9464", "[::]:9464", "10.0.0.1:9464"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

TEST(MetricsEndpointTest, RejectsAnAddressWithoutAPort) {
  for (const char* address :
       {"127.0.0.1", "127.0.0.1:http", ":9464", "127.0.0.1:70000"}) {
    auto endpoint = MetricsEndpoint::Start(address, {});
    EXPECT_EQ(endpoint.status().code(), absl::StatusCode::kInvalidArgument)
        << address;
    EXPECT_NE(endpoint.status().message().find("metrics_listen"),
              std::string::npos);
  }
}

TEST(MetricsEndpointTest, PortInUseIsUnavailable) {
  auto first = MetricsEndpoint::Start("127.0.0.1:0", {});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsEndpoint::Start(
      "127.0.0.1:" + std::to_string((*first)->port()), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ctxsel
