#include "devices/device_json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "devices/arch_traits.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(ParseDevicesTest, DerivesTraitsFromSyclArchitecture) {
  absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(R"({
    "devices": [
      {"sycl_architecture": "nvidia_gpu_sm_80",
       "memory_bytes": 85899345920, "compute_units": 108,
       "utilisation": 0.5,
       "agent": {"name": "A100", "attributes": {"uuid": "GPU-1"}}},
      {"traits": {"kind": ["fpga", "nohost"], "arch": ["agilex"],
                  "vendor": ["intel"]}}
    ]})");
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  const DeviceInfo& a100 = (*devices)[0];
  EXPECT_EQ(a100.isa, std::vector<std::string>{"sm_80"});
  EXPECT_EQ(a100.name, "A100");
  EXPECT_EQ(a100.vendor, std::vector<std::string>{"nvidia"});
  EXPECT_EQ(a100.memory_bytes, 85899345920);
  EXPECT_EQ(a100.compute_units, 108);
  EXPECT_DOUBLE_EQ(a100.utilisation, 0.5);
  EXPECT_EQ(a100.attributes.at("uuid"), "GPU-1");
  EXPECT_EQ(a100.backend, "file");
  EXPECT_EQ((*devices)[1].arch, std::vector<std::string>{"agilex"});
}

TEST(ParseDevicesTest, AcceptsProto3JsonSpellings) {
  auto devices = ParseDevices(R"([{"syclArchitecture": "amd_gpu_gfx90a",
                                   "memoryBytes": "68702699520",
                                   "computeUnits": 110,
                                   "claimCapacity": 4,
                                   "deviceClass": "ignored"}])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0].memory_bytes, 68702699520);
  EXPECT_EQ((*devices)[0].compute_units, 110);
  EXPECT_EQ((*devices)[0].claim_capacity, 4);
}

TEST(ParseDevicesTest, ReadsHealthAndParent) {
  absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(R"([
      {"sycl_architecture": "nvidia_gpu_sm_90", "uuid": "GPU-1",
       "health": "unhealthy", "health_reason": "Xid 79"},
      {"sycl_architecture": "nvidia_gpu_sm_90", "parent": "GPU-1",
       "health": "DEVICE_HEALTH_DEGRADED"},
      {"sycl_architecture": "nvidia_gpu_sm_90", "healthReason": "fine"}])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[0].health_reason, "Xid 79");
  EXPECT_EQ((*devices)[1].health, DeviceHealth::kDegraded);
  EXPECT_EQ((*devices)[1].parent, "GPU-1");
  EXPECT_EQ((*devices)[2].health, DeviceHealth::kHealthy);
  // And back: the JSON form reads as the same devices.
  absl::StatusOr<std::vector<DeviceInfo>> again =
      ParseDevices(DevicesToJsonText(*devices));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*again)[1].parent, "GPU-1");
  EXPECT_FALSE(ParseDevices(R"([{"sycl_architecture": "x86_64",
                                 "health": "sick"}])")
                   .ok());
}

TEST(ParseDevicesTest, AcceptsABareArray) {
  auto devices = ParseDevices(R"([{"sycl_architecture": "x86_64"}])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_TRUE((*devices)[0].IsHost());
}

TEST(ParseDevicesTest, RoundTripsThroughJson) {
  DeviceInfo d;
  d.id = "n1/gpu0";
  d.sycl_architecture = "amd_gpu_gfx90a";
  ASSERT_TRUE(ApplyArchTraits(d).ok());
  d.isa.push_back("mfma");
  d.extension = {"rocm"};
  d.backend = "kfd";
  d.memory_bytes = 1 << 30;
  d.attributes["pci_location"] = "c1:00.0";
  auto back = ParseDevices(DevicesToJsonText({d}));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(SameDeviceSet({d}, *back));
}

struct ErrorCase {
  const char* text;
  const char* message;  // expected substring
};

TEST(ParseDevicesTest, ErrorsNameTheField) {
  const ErrorCase cases[] = {
      {R"({"devices": [{"sycl_architecture": "nvidia_gpu_sm_90",
                        "memory_bytes": -1}]})",
       "devices[0].memory_bytes: expected a non-negative integer"},
      {R"({"devices": [{"traits": {"kind": ["gpu"]}}, {"knid": ["gpu"]}]})",
       "devices[1].knid: unknown field"},
      {R"({"devices": [{"traits": {"kind": ["gpu"], "isas": []}}]})",
       "devices[0].traits.isas: unknown field"},
      {R"({"devices": [{"sycl_architecture": "nvidia_gpu_sm_91"}]})",
       "devices[0].sycl_architecture: unknown SYCL architecture "
       "'nvidia_gpu_sm_91'"},
      {R"({"devices": [{"agent": {"name": "mystery"}}]})",
       "devices[0].traits.kind: empty and no sycl_architecture"},
      {R"({"devices": [{"traits": {"kind": "gpu"}}]})",
       "devices[0].traits.kind: expected an array of strings"},
      {R"({"devices": [{"traits": {"kind": ["gpu"]}, "utilisation": 3}]})",
       "devices[0].utilisation: expected a number in [0, 1]"},
      {R"({"devices": [{"traits": {"kind": ["gpu"]},
                        "agent": {"attributes": {"a": 1}}}]})",
       "devices[0].agent.attributes: a: expected a string"},
      {R"({"devices": [{"memory_bytes": "lots"}]})",
       "devices[0].memory_bytes: expected a non-negative integer"},
      {R"({"devices": [7]})", "devices[0]: expected an object"},
      {R"({"device": []})", "device: unknown field"},
      {R"({})", "missing 'devices'"},
      {R"("x")", "expected {\"devices\": [...]} or an array"},
      {R"({"devices": [)", "parse error"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(c.text);
    ASSERT_FALSE(devices.ok()) << c.text;
    EXPECT_EQ(devices.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(devices.status().message().find(c.message),
              absl::string_view::npos)
        << devices.status().message() << "\n  wanted: " << c.message;
  }
}

TEST(ParseDevicesTest, TheDemoFleetFilesParse) {
  const std::string dir =
      std::string(std::getenv("TEST_SRCDIR")) + "/ctxsel/tools/fixtures/fleet/";
  for (const char* name : {"dgx-h100.json", "mi250x.json", "pvc.json"}) {
    std::ifstream in(dir + name);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(text.str());
    ASSERT_TRUE(devices.ok()) << name << ": " << devices.status();
    EXPECT_TRUE((*devices)[0].IsHost()) << name;
    EXPECT_GE(devices->size(), 2u) << name;
  }
}

}  // namespace
}  // namespace ctxsel
