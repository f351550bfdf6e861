#include "images/binary_images.h"

#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "images/image_fixtures.h"

namespace ctxsel::images {
namespace {

using testing::CudaFatbin;
using testing::DeviceElf;
using ::testing::ElementsAre;
using testing::ElfWithSections;
using testing::FatbinEntry;
using ::testing::HasSubstr;
using testing::OffloadBundle;

std::vector<std::string> Ids(absl::string_view bytes) {
  absl::StatusOr<BinaryImages> found = ReadBinaryImages(bytes);
  EXPECT_TRUE(found.ok()) << found.status();
  std::vector<std::string> ids;
  if (found.ok()) {
    for (const DeviceImage& image : found->images)
      ids.push_back(ImageId(image));
  }
  return ids;
}

TEST(BinaryImagesTest, CudaFatbinListsCubinsAndPtx) {
  std::vector<FatbinEntry> entries = {{.ptx = false, .sm = 80},
                                      {.ptx = false, .sm = 90},
                                      {.ptx = true, .sm = 80}};
  EXPECT_THAT(Ids(testing::CudaHostBinary(entries)),
              ElementsAre("cubin:sm_80", "cubin:sm_90", "ptx:sm_80"));
  // A .fatbin file on its own, and two fatbins back to back.
  std::string two = CudaFatbin({{.sm = 70}}) + CudaFatbin({{.sm = 75}});
  EXPECT_THAT(Ids(two), ElementsAre("cubin:sm_70", "cubin:sm_75"));
}

TEST(BinaryImagesTest, HipFatbinTargetIds) {
  EXPECT_THAT(Ids(testing::HipHostBinary({"gfx90a:xnack-", "gfx908"})),
              ElementsAre("amdgcn:gfx90a:xnack-", "amdgcn:gfx908"));
}

TEST(BinaryImagesTest, WholeFileBundleWithSeveralTargetIds) {
  std::string bundle = OffloadBundle(
      {{"host-x86_64-unknown-linux-gnu", "host"},
       {"openmp-x86_64-pc-linux-gnu", "x"},
       {"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "y"},
       {"openmp-nvptx64-nvidia-cuda-sm_80", "ptx text"},
       {"openmp-nvptx64-nvidia-cuda", DeviceElf(190, 90)},
       {"openmp-amdgcn-amd-amdhsa", DeviceElf(224, 0x3f | 0x200, 2)},
       {"openmp-riscv64-unknown-linux-gnu", "z"},
       // No processor in the id, and no ELF header to read it from (the
       // fuzzer's first find: a null processor split into no parts).
       {"openmp-nvptx64-nvidia-cuda", "ptx text"}});
  absl::StatusOr<BinaryImages> found = ReadBinaryImages(bundle);
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> ids;
  for (const DeviceImage& image : found->images) ids.push_back(ImageId(image));
  EXPECT_THAT(ids, ElementsAre("host:x86_64-pc-linux-gnu",
                               "amdgcn:gfx90a:sramecc+:xnack-", "ptx:sm_80",
                               "cubin:sm_90", "amdgcn:gfx90a:xnack-"));
  ASSERT_EQ(found->skipped.size(), 2u);
  EXPECT_THAT(found->skipped[0], HasSubstr("riscv64"));
  EXPECT_THAT(found->skipped[1], HasSubstr("bad processor"));
}

TEST(BinaryImagesTest, Clang14ObjectSectionsAndEmbeddedImages) {
  // clang -c: one section per bundle entry.
  EXPECT_THAT(Ids(ElfWithSections(
                  {{"__CLANG_OFFLOAD_BUNDLE__openmp-x86_64-pc-linux-gnu", "x"},
                   {"__CLANG_OFFLOAD_BUNDLE__host-x86_64-pc-linux-gnu", ""}})),
              ElementsAre("host:x86_64-pc-linux-gnu"));
  // Linked: device ELFs inside .rodata next to the entries table.
  std::string rodata =
      "strings\x7f"
      "ELF and more" +
      DeviceElf(190, 80) + "padding" + DeviceElf(62, 0);
  absl::StatusOr<BinaryImages> found = ReadBinaryImages(
      ElfWithSections({{".rodata", rodata},
                       {"omp_offloading_entries", std::string(64, '\0')}}));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->offload_entries, 2);
  ASSERT_EQ(found->images.size(), 2u);
  EXPECT_EQ(ImageId(found->images[0]), "cubin:sm_80");
  EXPECT_EQ(ImageId(found->images[1]), "host:x86_64");
  // Without the entries table .rodata is not an offload program's.
  EXPECT_THAT(Ids(ElfWithSections({{".rodata", rodata}})), ElementsAre());
}

TEST(BinaryImagesTest, DeviceCodeObjectOnItsOwn) {
  EXPECT_THAT(Ids(DeviceElf(224, 0x30)), ElementsAre("amdgcn:gfx908"));
  // CUDA ELF ABI 7 (before CUDA 12.8): the sm in bits 0-7; ABI 8: 8-15.
  EXPECT_THAT(Ids(DeviceElf(190, 86, 7)), ElementsAre("cubin:sm_86"));
  EXPECT_THAT(Ids(DeviceElf(190, 0x6005a04, 8)), ElementsAre("cubin:sm_90"));
}

// Cubins a CUDA 13 driver (580.159, on an H200) linked from PTX for
// sm_80, sm_86 and sm_90 (cuLinkCreate with CU_JIT_TARGET): the sm_80 ones
// read sm_4 before the ABI 8 rule (e_flags 0x6005004).
TEST(BinaryImagesTest, RealCudaDriverCubins) {
  for (const char* sm : {"80", "86", "90"}) {
    std::ifstream in(absl::StrCat("images/testdata/cuda13_sm", sm, ".cubin"),
                     std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    ASSERT_FALSE(bytes.str().empty()) << sm;
    EXPECT_THAT(Ids(bytes.str()), ElementsAre(absl::StrCat("cubin:sm_", sm)));
  }
}

TEST(BinaryImagesTest, RejectsWhatItCannotRead) {
  EXPECT_THAT(ReadBinaryImages("#!/bin/sh\n").status().message(),
              HasSubstr("not an ELF64"));
  std::string fatbin = CudaFatbin({{.sm = 80}});
  EXPECT_THAT(
      ReadBinaryImages(fatbin.substr(0, fatbin.size() - 2)).status().message(),
      HasSubstr("outside the file"));
  std::string bundle = OffloadBundle({{"openmp-x86_64-pc-linux-gnu", "xx"}});
  EXPECT_FALSE(ReadBinaryImages(bundle.substr(0, bundle.size() - 1)).ok());
}

// Every prefix and random corruption of valid inputs is answered (an error
// or images), never a crash or a read out of bounds (run under ASan by
// --config=fuzz).
TEST(BinaryImagesTest, CorruptInputsAreAnsweredSafely) {
  std::vector<std::string> seeds = {
      testing::CudaHostBinary({{.sm = 80}, {.ptx = true, .sm = 70}}),
      testing::HipHostBinary({"gfx90a:xnack-"}),
      OffloadBundle({{"openmp-x86_64-pc-linux-gnu", DeviceElf(62, 0)}})};
  std::mt19937 rng(7);
  for (const std::string& seed : seeds) {
    for (size_t n = 0; n < seed.size(); ++n) {
      (void)ReadBinaryImages(absl::string_view(seed).substr(0, n));
    }
    for (int i = 0; i < 2000; ++i) {
      std::string s = seed;
      for (int k = 0; k < 4; ++k)
        s[rng() % s.size()] = static_cast<char>(rng());
      (void)ReadBinaryImages(s);
    }
  }
}

}  // namespace
}  // namespace ctxsel::images
