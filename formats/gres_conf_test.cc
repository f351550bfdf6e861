#include "formats/gres_conf.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::Device Gpu(const std::string& id, int index, int vendor_index,
               const std::string& arch = "nvidia_gpu_sm_90",
               const std::string& vendor = "nvidia") {
  v1::Device d;
  d.set_id(id);
  d.set_index(index);
  d.set_vendor_index(vendor_index);
  d.set_sycl_architecture(arch);
  d.mutable_traits()->add_vendor(vendor);
  d.set_uuid("GPU-" + std::to_string(vendor_index));
  return d;
}

v1::Device Host() {
  v1::Device d;
  d.set_id("n1/cpu0");
  d.set_index(-1);
  d.mutable_traits()->add_vendor("intel");
  return d;
}

// Two GPUs whose device numbers are not their vendor indices.
std::vector<v1::Device> Node() {
  return {Host(), Gpu("n1/gpu0", 1, 1), Gpu("n1/gpu1", 0, 0)};
}

// What a user passes to sbatch to land where the Select placed the ranks.
TEST(SubmitOptions, AsksForTheRanksGpusByType) {
  auto rank = [](v1::Device device, bool gpu) {
    v1::PlacementChoice choice;
    if (gpu) device.mutable_traits()->add_kind("gpu");
    *choice.mutable_device() = device;
    return choice;
  };
  EXPECT_EQ(SubmitOptions({rank(Gpu("n1/gpu0", 0, 0), true),
                           rank(Gpu("n1/gpu1", 1, 1), true)}),
            "--gres=gpu:sm_90:2");
  EXPECT_EQ(SubmitOptions(
                {rank(Gpu("n1/gpu0", 0, 0), true),
                 rank(Gpu("n2/gpu0", 0, 0, "amd_gpu_gfx90a", "amd"), true)}),
            "--gres=gpu:gfx90a:1,gpu:sm_90:1");
  EXPECT_EQ(SubmitOptions({rank(Host(), false)}), "");
}

TEST(GresConf, OneLinePerGpuInVendorIndexOrder) {
  absl::StatusOr<std::string> text = GresConf("n1", Node(), "");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text,
            "# ctxsel-cli slurm gres-conf --node=n1: GPU N is vendor index N\n"
            "Name=gpu Type=sm_90 File=/dev/nvidia0 # ctxsel n1/gpu1 GPU-0\n"
            "Name=gpu Type=sm_90 File=/dev/nvidia1 # ctxsel n1/gpu0 GPU-1\n");
  EXPECT_THAT(*GresConf("n1", Node(), "/tmp/dev/gpu"),
              HasSubstr("File=/tmp/dev/gpu1 # ctxsel n1/gpu0"));
}

TEST(GresConf, RefusesWhatOneNumberingCannotName) {
  std::vector<v1::Device> amd = {Gpu("n2/gpu0", 0, 0, "amd_gpu_gfx90a", "amd")};
  EXPECT_THAT(GresConf("n2", amd, "").status().message(),
              HasSubstr("--file_prefix: n2/gpu0 is a amd GPU"));
  EXPECT_THAT(*GresConf("n2", amd, "/dev/dri/card"),
              HasSubstr("Name=gpu Type=gfx90a File=/dev/dri/card0"));
  std::vector<v1::Device> mixed = {amd[0], Gpu("n2/gpu1", 1, 0)};
  EXPECT_THAT(GresConf("n2", mixed, "/x").status().message(),
              HasSubstr("GPUs of amd and nvidia"));
  EXPECT_EQ(GresConf("n1", {Host()}, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ParseGres, ReadsGresConfLinesForThisNode) {
  absl::StatusOr<std::vector<GresDevice>> gres = ParseGres(
      "# a comment\n"
      "AutoDetect=off\n"
      "NodeName=n[2-3] Name=gpu File=/dev/nvidia[0-3]\n"
      "NodeName=n1 Name=gpu Type=sm_90 File=/dev/nvidia[0-1] # ctxsel n1/gpu1\n"
      "Name=gpu Type=a100 File=/dev/nvidia3\n"
      "Name=mps Count=100\n",
      "n1");
  ASSERT_TRUE(gres.ok()) << gres.status();
  ASSERT_EQ(gres->size(), 3u);
  EXPECT_EQ((*gres)[0].line, 4);
  EXPECT_EQ((*gres)[0].file, "/dev/nvidia0");
  EXPECT_EQ((*gres)[0].index, 0);
  EXPECT_EQ((*gres)[0].type, "sm_90");
  EXPECT_EQ((*gres)[0].ctxsel, "n1/gpu1");
  EXPECT_EQ((*gres)[1].index, 1);
  EXPECT_EQ((*gres)[2].index, 3);
  EXPECT_EQ((*gres)[2].type, "a100");
  EXPECT_THAT(
      ParseGres("Name=gpu File=/dev/nvidia[0-x]", "n1").status().message(),
      HasSubstr("line 1: '/dev/nvidia[0-x]': '0-x' is not a range"));
}

TEST(ParseGres, ReadsSlurmdG) {
  absl::StatusOr<std::vector<GresDevice>> gres = ParseGres(
      "slurmd: Gres Name=gpu Type=sm_90 Count=1 Index=1 ID=7696487 "
      "File=/dev/nvidia1 (null)\n"
      "slurmd: Gres Name=gpu Type=sm_90 Count=1 Index=0 ID=7696487 "
      "File=/dev/nvidia0 (null)\n",
      "n1");
  ASSERT_TRUE(gres.ok()) << gres.status();
  ASSERT_EQ(gres->size(), 2u);
  EXPECT_EQ((*gres)[0].index, 1);
  EXPECT_EQ((*gres)[0].file, "/dev/nvidia1");
  EXPECT_EQ((*gres)[1].index, 0);
}

TEST(CompareGres, WhatGresConfWritesAgreesInAnyLineOrder) {
  std::string text = *GresConf("n1", Node(), "");
  EXPECT_THAT(CompareGres(*ParseGres(text, "n1"), "n1", Node(), ""), IsEmpty());
  // Slurm numbers by File=, not by line: swapped lines still agree.
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::swap(lines[1], lines[2]);
  EXPECT_THAT(CompareGres(*ParseGres(absl::StrJoin(lines, "\n"), "n1"), "n1",
                          Node(), ""),
              IsEmpty());
}

TEST(CompareGres, NamesEveryDeviceThatDiffers) {
  // The device files of the two annotated lines exchanged.
  std::vector<std::string> differences = CompareGres(
      *ParseGres("Name=gpu Type=sm_90 File=/dev/nvidia1 # ctxsel n1/gpu1\n"
                 "Name=gpu Type=sm_90 File=/dev/nvidia0 # ctxsel n1/gpu0\n",
                 "n1"),
      "n1", Node(), "");
  EXPECT_THAT(differences,
              ElementsAre(HasSubstr("n1/gpu1 (vendor index 0, GPU-0): "
                                    "Slurm's GPU 0 is gres.conf line 2 "
                                    "(File=/dev/nvidia0), which names n1/gpu0"),
                          HasSubstr("n1/gpu0 (vendor index 1, GPU-1): "
                                    "Slurm's GPU 1 is gres.conf line 1")));
  EXPECT_THAT(
      CompareGres(*ParseGres("Name=gpu Type=a100 File=/dev/nvidia0\n"
                             "Name=gpu File=/dev/nvidia2\n"
                             "Name=gpu Count=1\n",
                             "n1"),
                  "n1", Node(), ""),
      ElementsAre(HasSubstr("line 3: a GPU without a numbered File="),
                  HasSubstr("n1/gpu1 (vendor index 0, GPU-0): Slurm's GPU 0 "
                            "(gres.conf line 1 (File=/dev/nvidia0)) has "
                            "Type=a100, ctxsel's has Type=sm_90"),
                  HasSubstr("n1/gpu0 (vendor index 1, GPU-1): Slurm has no "
                            "GPU 1 on node n1"),
                  HasSubstr("gres.conf line 2 (File=/dev/nvidia2): Slurm's "
                            "GPU 2 is no GPU of ctxsel's node n1")));
  EXPECT_THAT(CompareGres(*ParseGres("Name=gpu File=/dev/nvidia0\n"
                                     "Name=gpu File=/dev/nvidia1\n"
                                     "Name=gpu File=/dev/nvidia-uvm1\n",
                                     "n1"),
                          "n1", Node(), ""),
              ElementsAre(HasSubstr("n1/gpu0 (vendor index 1, GPU-1): "
                                    "Slurm's GPU 1 is on more than one line")));
}

}  // namespace
}  // namespace ctxsel::slurm
