#include "client/cli/launcher_env.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fake environment.
Getenv Env(std::map<std::string, std::string> vars) {
  auto shared =
      std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

v1::Device Gpu(const std::string& id, const std::string& vendor,
               int vendor_index, const std::string& uuid = "") {
  v1::Device d;
  d.set_id(id);
  d.set_index(std::stoi(id.substr(id.size() - 1)));
  d.mutable_traits()->add_kind("gpu");
  d.mutable_traits()->add_vendor(vendor);
  d.set_vendor_index(vendor_index);
  d.set_uuid(uuid);
  return d;
}

v1::Device HostCpu(const std::string& id) {
  v1::Device d;
  d.set_id(id);
  d.set_index(-1);
  d.mutable_traits()->add_kind("cpu");
  d.mutable_traits()->add_kind("host");
  d.mutable_traits()->add_vendor("intel");
  return d;
}

// Four NVIDIA GPUs, their vendor indices in reverse of the node's numbers.
std::vector<v1::Device> FourNvidia() {
  return {HostCpu("n1/cpu0"), Gpu("n1/gpu0", "nvidia", 3),
          Gpu("n1/gpu1", "nvidia", 2), Gpu("n1/gpu2", "nvidia", 1),
          Gpu("n1/gpu3", "nvidia", 0, "GPU-aaaa-0003")};
}

// One GPU of each vendor: each is its runtime's device 0.
std::vector<v1::Device> Mixed() {
  return {HostCpu("m/cpu0"), Gpu("m/gpu0", "nvidia", 0),
          Gpu("m/gpu1", "intel", 0), Gpu("m/gpu2", "amd", 0)};
}

TEST(FindAllocationTest, SlurmFirstThenEachRuntime) {
  EXPECT_EQ(FindAllocation(Env({{"CUDA_VISIBLE_DEVICES", "0"},
                                {"SLURM_JOB_GPUS", "2"},
                                {"SLURM_STEP_GPUS", "3"}}))
                ->name,
            "SLURM_STEP_GPUS");
  EXPECT_EQ(FindAllocation(
                Env({{"CUDA_VISIBLE_DEVICES", "0"}, {"SLURM_JOB_GPUS", "2"}}))
                ->value,
            "2");
  EXPECT_EQ(FindAllocation(
                Env({{"ZE_AFFINITY_MASK", "0"}, {"HIP_VISIBLE_DEVICES", "1"}}))
                ->name,
            "HIP_VISIBLE_DEVICES");
  absl::StatusOr<AllocationVariable> none = FindAllocation(Env({}));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), HasSubstr("SLURM_STEP_GPUS"));
  EXPECT_THAT(none.status().message(), HasSubstr("is set"));
}

TEST(AllowedDevicesTest, SlurmIndicesAreVendorIndices) {
  EXPECT_THAT(*AllowedDevices({"SLURM_STEP_GPUS", "0,2"}, "n1", FourNvidia()),
              ElementsAre("n1/gpu3", "n1/gpu1"));
  EXPECT_THAT(*AllowedDevices({"SLURM_JOB_GPUS", "1-3"}, "n1", FourNvidia()),
              ElementsAre("n1/gpu2", "n1/gpu1", "n1/gpu0"));
}

TEST(AllowedDevicesTest, RuntimeVariablesTakeIndicesAndUuids) {
  EXPECT_THAT(*AllowedDevices({"CUDA_VISIBLE_DEVICES", "GPU-x-1,3,3"}, "n1",
                              FourNvidia()),
              ElementsAre("GPU-x-1", "n1/gpu0"));
  EXPECT_THAT(*AllowedDevices({"ZE_AFFINITY_MASK", "0.0,0.1"}, "m", Mixed()),
              ElementsAre("m/gpu1"));
  EXPECT_THAT(*AllowedDevices({"ROCR_VISIBLE_DEVICES", "0"}, "m", Mixed()),
              ElementsAre("m/gpu2"));
  EXPECT_THAT(*AllowedDevices({"HIP_VISIBLE_DEVICES", "0"}, "m", Mixed()),
              ElementsAre("m/gpu2"));
  EXPECT_THAT(*AllowedDevices({"CUDA_VISIBLE_DEVICES", "0"}, "m", Mixed()),
              ElementsAre("m/gpu0"));
}

TEST(AllowedDevicesTest, AnUnmappableEntryNamesTheVariableAndTheEntry) {
  const struct {
    AllocationVariable allocation;
    const char* says;
  } cases[] = {
      {{"SLURM_STEP_GPUS", "0,7"},
       "SLURM_STEP_GPUS=0,7: '7': node n1 has no "
       "device with vendor index 7"},
      {{"SLURM_STEP_GPUS", "GPU-x"}, "'GPU-x': not a GRES index"},
      {{"SLURM_JOB_GPUS", "3-1"}, "'3-1'"},
      {{"CUDA_VISIBLE_DEVICES", "-1"}, "'-1': neither"},
      {{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}, "'NoDevFiles'"},
      {{"ROCR_VISIBLE_DEVICES", "0"}, "none of this runtime"},
      {{"ZE_AFFINITY_MASK", "1.x"}, "'1.x'"},
      {{"CUDA_VISIBLE_DEVICES", ""}, "CUDA_VISIBLE_DEVICES=: names no device"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<std::string>> allowed =
        AllowedDevices(c.allocation, "n1", FourNvidia());
    ASSERT_FALSE(allowed.ok()) << c.allocation.value;
    EXPECT_EQ(allowed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(allowed.status().message(), HasSubstr(c.says));
  }
}

// Slurm counts GPUs of every vendor alike: on a node where two vendors have
// a device 0, "0" could be either.
TEST(AllowedDevicesTest, SlurmIndexOfTwoVendorsIsAmbiguous) {
  absl::StatusOr<std::vector<std::string>> allowed =
      AllowedDevices({"SLURM_STEP_GPUS", "0"}, "m", Mixed());
  ASSERT_FALSE(allowed.ok());
  EXPECT_THAT(allowed.status().message(), HasSubstr("ambiguous"));
  EXPECT_THAT(allowed.status().message(), HasSubstr("m/gpu0, m/gpu1, m/gpu2"));
}

TEST(RankFromEnvironmentTest, SlurmThenOpenMpiThenPmi) {
  EXPECT_EQ(*RankFromEnvironment(Env({})), std::nullopt);
  EXPECT_EQ(*RankFromEnvironment(
                Env({{"PMI_RANK", "3"}, {"OMPI_COMM_WORLD_RANK", "2"}})),
            2);
  EXPECT_EQ(
      *RankFromEnvironment(Env({{"PMI_RANK", "3"}, {"SLURM_PROCID", "1"}})), 1);
  EXPECT_EQ(*RankFromEnvironment(Env({{"PMI_RANK", "3"}})), 3);
  for (const char* bad : {"", "-1", "x", "1.5", "99999999999"}) {
    absl::StatusOr<std::optional<int>> rank =
        RankFromEnvironment(Env({{"SLURM_PROCID", bad}}));
    ASSERT_FALSE(rank.ok()) << bad;
    EXPECT_THAT(rank.status().message(), HasSubstr("SLURM_PROCID="));
  }
}

TEST(SlurmHolderTest, JobDotStep) {
  EXPECT_EQ(SlurmHolder(Env({{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "0"}})),
            "slurm-42.0");
  EXPECT_EQ(SlurmHolder(Env({{"SLURM_JOB_ID", "42"}})), "");
  EXPECT_EQ(SlurmHolder(Env({})), "");
}

}  // namespace
}  // namespace ctxsel::cli
