#include "agent/device_text.h"

#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

TEST(DevicesToTextTest, OneBlockPerDevice) {
  DeviceInfo d;
  d.id = "n7/gpu0";
  d.index = 0;
  d.name = "NVIDIA H100";
  d.sycl_architecture = "nvidia_gpu_sm_90";
  d.backend = "nvml";
  d.kind = {"gpu", "nohost"};
  d.isa = {"sm_90"};
  d.memory_bytes = int64_t{80} << 30;
  d.compute_units = 132;
  d.utilisation = 0.25;
  d.attributes["uuid"] = "GPU-1";
  EXPECT_EQ(DevicesToText("n7", {d}),
            "n7/gpu0 (device 0): NVIDIA H100\n"
            "  sycl_architecture: nvidia_gpu_sm_90   backend: nvml\n"
            "  kind: gpu nohost\n"
            "  isa: sm_90\n"
            "  memory: 80.0 GiB   compute units: 132   utilisation: 25%\n"
            "  uuid: GPU-1\n");
}

TEST(DevicesToTextTest, SaysHealthAndParentWhenThereIsOne) {
  DeviceInfo d;
  d.id = "n7/gpu1";
  d.name = "NVIDIA H100 MIG 1g.10gb";
  d.backend = "nvml";
  d.parent = "n7/gpu0";
  d.health = DeviceHealth::kUnhealthy;
  d.health_reason = "Xid 79 at 12:00:00 UTC";
  const std::string text = DevicesToText("n7", {d});
  EXPECT_NE(text.find("  partition of: n7/gpu0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  health: unhealthy (Xid 79 at 12:00:00 UTC)\n"),
            std::string::npos)
      << text;
}

TEST(DevicesToTextTest, NoDevices) {
  EXPECT_EQ(DevicesToText("n7", {}), "n7: no devices found\n");
}

}  // namespace
}  // namespace ctxsel::agent
