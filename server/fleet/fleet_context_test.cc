#include "server/fleet/fleet_context.h"

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

Device MakeDevice(int32_t index, std::string kind) {
  Device d;
  d.id = "n/" + std::to_string(index);
  d.node = "n";
  d.index = index;
  d.traits.kind = {std::move(kind)};
  return d;
}

TEST(FleetContextTest, NodeDevicesAreTargetDevicesByIndex) {
  const std::vector<Device> node = {
      MakeDevice(-1, "host"), MakeDevice(0, "gpu"), MakeDevice(1, "fpga")};
  selector::Context ctx = DeviceContext(node[2], node);
  EXPECT_EQ(ctx.device.kind, selector::NameSet{"fpga"});
  EXPECT_EQ(ctx.target_devices.default_device, 1);
  ASSERT_EQ(ctx.target_devices.devices.size(), 3u);
  EXPECT_EQ(ctx.target_devices.devices.at(-1).kind, selector::NameSet{"host"});
  EXPECT_EQ(ctx.target_devices.devices.at(0).kind, selector::NameSet{"gpu"});
  EXPECT_TRUE(ctx.construct.empty());
  EXPECT_TRUE(ctx.variables.empty());
}

TEST(FleetContextTest, TargetDeviceSelectorsSeeTheNode) {
  const std::vector<Device> node = {MakeDevice(-1, "host"),
                                    MakeDevice(0, "gpu")};
  auto on_host =
      selector::Selector::Parse("target_device={device_num(-1), kind(host)}");
  auto default_gpu = selector::Selector::Parse("target_device={kind(gpu)}");
  ASSERT_TRUE(on_host.ok() && default_gpu.ok());
  // From the GPU: device -1 is the host; the default device is the GPU.
  EXPECT_TRUE(
      MatchSelector(*on_host, DeviceContext(node[1], node))->compatible);
  EXPECT_TRUE(
      MatchSelector(*default_gpu, DeviceContext(node[1], node))->compatible);
  // From the host CPU, the default device is the host, not a GPU.
  EXPECT_FALSE(
      MatchSelector(*default_gpu, DeviceContext(node[0], node))->compatible);
}

}  // namespace
}  // namespace ctxsel::server
