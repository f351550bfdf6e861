// Test fixtures in the formats binary_images.h reads, built from their
// documented layouts: CUDA fatbins, clang offload bundles, device ELF
// headers and host ELF files holding them in named sections.
#ifndef CTXSEL_IMAGES_IMAGE_FIXTURES_H_
#define CTXSEL_IMAGES_IMAGE_FIXTURES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ctxsel::images::testing {

struct FatbinEntry {
  bool ptx = false;  // PTX (kind 1) or a cubin (kind 2)
  int sm = 0;        // 80 for sm_80
  std::string payload = "code";
};

// A fatbin: 16-byte header, then 64-byte entry headers and payloads.
std::string CudaFatbin(const std::vector<FatbinEntry>& entries);

// A minimal ELF64 device code object (header and an empty section table).
std::string DeviceElf(unsigned e_machine, uint32_t e_flags,
                      unsigned abi_version = 0);

// A clang offload bundle of (entry id, contents) pairs.
std::string OffloadBundle(
    const std::vector<std::pair<std::string, std::string>>& entries);

// An ELF64 file of `e_machine` with these (name, contents) sections.
std::string ElfWithSections(
    const std::vector<std::pair<std::string, std::string>>& sections,
    unsigned e_machine = 62);

// A host ELF whose .nv_fatbin holds `entries`, or whose .hip_fatbin holds a
// bundle of one code object per AMD target id ("gfx90a:xnack-").
std::string CudaHostBinary(const std::vector<FatbinEntry>& entries);
std::string HipHostBinary(const std::vector<std::string>& target_ids);

}  // namespace ctxsel::images::testing

#endif  // CTXSEL_IMAGES_IMAGE_FIXTURES_H_
