#include "agent/cpu_backend.h"

#include <thread>

#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

TEST(DescribeCpuTest, AddsLevelsAndTopology) {
  CpuInfo cpu;
  cpu.vendor_id = "AuthenticAMD";
  cpu.vendor = "amd";
  cpu.brand = "AMD EPYC 9654";
  cpu.family = 25;
  cpu.isas = {"sse2", "avx2", "avx512f"};
  cpu.level = 4;
  DeviceInfo d = DescribeCpu(cpu, {2, 192, 384, 8, int64_t{1} << 40});
  EXPECT_EQ(d.sycl_architecture, "x86_64");
  EXPECT_TRUE(d.IsHost());
  EXPECT_EQ(d.vendor, std::vector<std::string>{"amd"});
  EXPECT_EQ(d.isa,
            (std::vector<std::string>{"sse2", "avx2", "avx512f", "x86_64_v2",
                                      "x86_64_v3", "x86_64_v4"}));
  EXPECT_EQ(d.compute_units, 192);
  EXPECT_EQ(d.threads, 384);
  EXPECT_EQ(d.numa_nodes, 8);
  EXPECT_EQ(d.memory_bytes, int64_t{1} << 40);
  EXPECT_EQ(d.attributes.at("family"), "25");
  EXPECT_EQ(d.name, "AMD EPYC 9654");
}

TEST(DescribeCpuTest, NotX86MeansNoDevice) {
  EXPECT_TRUE(DescribeCpu(CpuInfo(), {}).sycl_architecture.empty());
}

TEST(CpuBusyFractionTest, FromProcStatLines) {
  std::string before = "cpu  100 0 100 700 100 0 0 0 0 0";
  std::string after = "cpu  150 0 150 750 150 0 0 0 0 0";  // +100 busy, +200
  EXPECT_DOUBLE_EQ(CpuBusyFraction(before, after), 0.5);
  EXPECT_DOUBLE_EQ(CpuBusyFraction(after, after), 0.0);
  EXPECT_DOUBLE_EQ(CpuBusyFraction("", after), 0.0);
}

TEST(CpuBackendTest, FindsThisMachinesCpu) {
  auto backend = MakeCpuBackend("/proc/stat", "/proc/cpuinfo");
  absl::StatusOr<std::vector<DeviceInfo>> devices = backend->Discover();
  ASSERT_TRUE(devices.ok()) << devices.status();
#if defined(__x86_64__)
  ASSERT_EQ(devices->size(), 1u);
  const DeviceInfo& cpu = (*devices)[0];
  EXPECT_EQ(cpu.sycl_architecture, "x86_64");
  EXPECT_GE(cpu.compute_units, 1);
  EXPECT_GE(cpu.threads, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_GE(cpu.numa_nodes, 1);
  EXPECT_GT(cpu.memory_bytes, 0);
  EXPECT_GE(cpu.utilisation, 0.0);
  EXPECT_LE(cpu.utilisation, 1.0);
#endif
}

}  // namespace
}  // namespace ctxsel::agent
