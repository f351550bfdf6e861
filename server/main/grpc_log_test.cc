#include "server/main/grpc_log.h"

#include <grpc/support/log.h>

#include <memory>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class GrpcLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("[%l] %v");
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("t", sink));
    // As grpc_init() does: gpr_log drops every line until then.
    gpr_log_verbosity_init();
    RouteGrpcLogToSpdlog();
  }
  void TearDown() override {
    gpr_set_log_function(nullptr);
    spdlog::set_default_logger(previous_);
  }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(GrpcLogTest, GoesToTheServerLoggerAtItsLevel) {
  gpr_log(__FILE__, 7, GPR_LOG_SEVERITY_ERROR, "%s", "transport closed");
  EXPECT_EQ(out_.str(),
            "[error] grpc: server/main/grpc_log_test.cc:7 transport closed\n");
}

// What gRPC 1.51's HPACK parser logs for a bad grpc-timeout quotes the
// client's value; a newline in it must not start a line of its own.
TEST_F(GrpcLogTest, AClientsNewlineCannotForgeALine) {
  gpr_log("hpack_parser.cc", 1, GPR_LOG_SEVERITY_ERROR,
          "Error parsing metadata: error=invalid value key=grpc-timeout "
          "value=1S\n[info] forged\x1b[2J");
  EXPECT_EQ(out_.str(),
            "[error] grpc: hpack_parser.cc:1 Error parsing metadata: "
            "error=invalid value key=grpc-timeout value=1S\\n[info] "
            "forged\\x1b[2J\n");
  EXPECT_THAT(out_.str(), Not(HasSubstr("\n[info] forged")));
}

}  // namespace
}  // namespace ctxsel::server
