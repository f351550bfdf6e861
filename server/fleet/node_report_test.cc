// The one check of a report and of a beat (node_report.h): what the Fleet
// and the inventory used to check each in their own way.
#include "server/fleet/node_report.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

Device Gpu(int index) {
  Device d;
  d.index = index;
  d.traits.kind = {"gpu", "nohost"};
  d.traits.arch = {"nvptx"};
  return d;
}

absl::Status Check(std::vector<Device> devices) {
  NodeState node;
  node.id = "n1";
  node.devices = std::move(devices);
  return NormalizeReport(node);
}

TEST(NodeReportTest, ReportFaultsAreInvalidArguments) {
  Device twin = Gpu(0);
  twin.id = "n1/other";
  struct Case {
    std::vector<Device> devices;
    const char* message;
  };
  Device elsewhere = Gpu(0);
  elsewhere.node = "n2";
  Device nan = Gpu(0);
  nan.properties.utilisation = std::nan("");
  Device over = Gpu(0);
  over.properties.utilisation = 1.5;
  Device id = Gpu(0);
  id.id = "n1/gpu0";
  Device same_id = Gpu(1);
  same_id.id = "n1/gpu0";
  const Case cases[] = {
      {{Gpu(0), twin}, "node.devices[1].index: 0 is used twice"},
      {{elsewhere}, "node.devices[0].node: 'n2'"},
      {{nan}, "node.devices[0].utilisation: nan is not in [0, 1]"},
      {{over}, "node.devices[0].utilisation: 1.5 is not in [0, 1]"},
      {{id, same_id}, "node.devices[1].id: 'n1/gpu0' is used twice"},
  };
  for (const Case& c : cases) {
    absl::Status s = Check(c.devices);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  EXPECT_TRUE(Check({Gpu(0), Gpu(1)}).ok());
}

// The agent's version is printed in `nodes ls`: no terminal escapes in it.
TEST(NodeReportTest, AgentVersionFollowsTheNamesRule) {
  NodeState node;
  node.id = "n1";
  node.devices = {Gpu(0)};
  node.agent_version = "ctxsel-agent 0.1.0\x1b[2J";
  absl::Status s = NormalizeReport(node);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node.agent_version: control character"));
  node.agent_version = "ctxsel-agent 0.1.0";
  EXPECT_TRUE(NormalizeReport(node).ok());
  node.agent_version.clear();  // an agent that does not say
  EXPECT_TRUE(NormalizeReport(node).ok());
}

// Placement clamped a beat's 7.0 to 1.0 that the inventory refused; a NaN
// was refused by both with different messages. One rule now: [0, 1].
TEST(NodeReportTest, BeatValuesOutsideZeroToOneAreRefusedNotClamped) {
  EXPECT_TRUE(CheckBeat({}).ok());
  EXPECT_TRUE(CheckBeat({{"n1/gpu0", 0.0}, {"n1/gpu1", 1.0}}).ok());
  for (double bad : {-0.1, 1.5, 7.0, std::nan(""),
                     std::numeric_limits<double>::infinity()}) {
    absl::Status s = CheckBeat({{"n1/gpu0", 0.5}, {"n1/gpu1", bad}});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("utilisation[1] (n1/gpu1): ")) << bad;
  }
}

}  // namespace
}  // namespace ctxsel::server
