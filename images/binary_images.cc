#include "images/binary_images.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ctxsel::images {
namespace {

constexpr absl::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr absl::string_view kElfMagic =
    "\x7f"
    "ELF";
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kFatbinPtx = 1;
constexpr uint16_t kFatbinElf = 2;
constexpr unsigned kEmCuda = 190;
constexpr unsigned kEmAmdgpu = 224;
// Limits a structure may claim before it is taken for garbage.
constexpr uint64_t kMaxBundleEntries = 4096;
constexpr int kMaxFatbinEntries = 65536;

// Little-endian reads; nullopt past the end.
template <typename T>
std::optional<T> Read(absl::string_view b, uint64_t at) {
  if (at > b.size() || b.size() - at < sizeof(T)) return std::nullopt;
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    v |= static_cast<T>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  }
  return v;
}

std::optional<absl::string_view> Slice(absl::string_view b, uint64_t at,
                                       uint64_t size) {
  if (at > b.size() || b.size() - at < size) return std::nullopt;
  return b.substr(at, size);
}

absl::Status Truncated(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": points outside the file (truncated or corrupt)"));
}

class Collector {
 public:
  explicit Collector(BinaryImages& out) : out_(out) {}

  void Add(absl::StatusOr<DeviceImage> image, absl::string_view entry) {
    if (!image.ok()) {
      out_.skipped.push_back(
          absl::StrCat(entry, ": ", image.status().message()));
      return;
    }
    for (const DeviceImage& have : out_.images) {
      if (have == *image) return;
    }
    out_.images.push_back(*std::move(image));
  }

  BinaryImages& out() { return out_; }

 private:
  BinaryImages& out_;
};

struct ElfHeader {
  unsigned machine = 0;
  uint32_t flags = 0;
  unsigned abi_version = 0;
  uint64_t shoff = 0;
  unsigned shentsize = 0;
  unsigned shnum = 0;
  unsigned shstrndx = 0;
};

std::optional<ElfHeader> ReadElfHeader(absl::string_view b) {
  if (!absl::StartsWith(b, kElfMagic) || b.size() < 64) return std::nullopt;
  if (b[4] != 2 || b[5] != 1) return std::nullopt;  // ELF64, little-endian
  ElfHeader h;
  h.abi_version = static_cast<unsigned char>(b[8]);
  h.machine = *Read<uint16_t>(b, 18);
  h.flags = *Read<uint32_t>(b, 48);
  h.shoff = *Read<uint64_t>(b, 40);
  h.shentsize = *Read<uint16_t>(b, 58);
  h.shnum = *Read<uint16_t>(b, 60);
  h.shstrndx = *Read<uint16_t>(b, 62);
  return h;
}

// The bytes an embedded ELF spans (to the end of its section headers).
uint64_t ElfSize(const ElfHeader& h) {
  return h.shoff + static_cast<uint64_t>(h.shentsize) * h.shnum;
}

// A device code object's image, named by its ELF header.
absl::StatusOr<DeviceImage> ImageOfDeviceElf(const ElfHeader& h) {
  absl::string_view arch = TripleArchOfMachine(h.machine);
  if (h.machine == kEmCuda) {
    // ELF ABI version 8 (CUDA 12.8 on) moved the sm from bits 0-7 to 8-15
    // (LLVM's EF_CUDA_SM_MASK); a CUDA 13 driver's cubin for sm_90 has
    // e_flags 0x6005a04.
    constexpr unsigned kCudaAbiV2 = 8;
    const uint32_t sm =
        h.abi_version >= kCudaAbiV2 ? (h.flags >> 8) & 0xff : h.flags & 0xff;
    return ImageFor(arch, absl::StrCat("sm_", sm));
  }
  if (h.machine == kEmAmdgpu) {
    absl::string_view processor = AmdgpuProcessor(h.flags & 0xff);
    if (processor.empty()) {
      return absl::NotFoundError(
          absl::StrCat("AMDGPU EF_AMDGPU_MACH 0x", absl::Hex(h.flags & 0xff),
                       " is not in images/image_targets.def"));
    }
    std::string id(processor);
    if (h.abi_version >= 2) {  // code object v4+: target-id feature bits
      static constexpr const char* kXnack[] = {"", "", ":xnack-", ":xnack+"};
      static constexpr const char* kSramecc[] = {"", "", ":sramecc-",
                                                 ":sramecc+"};
      absl::StrAppend(&id, kSramecc[(h.flags >> 10) & 3],
                      kXnack[(h.flags >> 8) & 3]);
    }
    return ImageFor(arch, id);
  }
  if (arch.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "ELF machine ", h.machine, " is not in images/image_targets.def"));
  }
  return ImageFor(arch, "");
}

// One bundle entry: "KIND-ARCH-VENDOR-OS[-ENV[-TARGET ID]]".
void AddBundleEntry(absl::string_view id, absl::string_view contents,
                    Collector& c) {
  std::pair<absl::string_view, absl::string_view> kind_rest =
      absl::StrSplit(id, absl::MaxSplits('-', 1));
  if (kind_rest.first == "host") return;
  std::vector<absl::string_view> parts =
      absl::StrSplit(kind_rest.second, absl::MaxSplits('-', 4));
  absl::string_view processor;
  if (parts.size() == 5) {
    processor = parts[4];
    parts.pop_back();
  } else if (parts.size() == 4 && (absl::StartsWith(parts[3], "sm_") ||
                                   absl::StartsWith(parts[3], "gfx"))) {
    processor = parts[3];
    parts.pop_back();
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  std::optional<ElfHeader> elf = ReadElfHeader(contents);
  if (processor.empty() && elf &&
      (elf->machine == kEmCuda || elf->machine == kEmAmdgpu)) {
    c.Add(ImageOfDeviceElf(*elf), id);
    return;
  }
  absl::StatusOr<DeviceImage> image = ImageFor(
      parts.empty() ? "" : parts[0], processor, absl::StrJoin(parts, "-"));
  // CUDA bundle entries hold PTX text unless they are a cubin.
  if (image.ok() && image->kind == ImageKind::kCubin && !elf) {
    image->kind = ImageKind::kPtx;
  }
  c.Add(std::move(image), id);
}

// One bundle at `b`'s start; its end (the furthest byte it names).
absl::StatusOr<uint64_t> ParseBundle(absl::string_view b, Collector& c) {
  std::optional<uint64_t> n = Read<uint64_t>(b, kBundleMagic.size());
  if (!n) return Truncated("offload bundle");
  if (*n > kMaxBundleEntries) {
    return absl::InvalidArgumentError(
        absl::StrCat("offload bundle: ", *n, " entries"));
  }
  uint64_t at = kBundleMagic.size() + 8;
  uint64_t end = at;
  for (uint64_t i = 0; i < *n; ++i) {
    std::optional<uint64_t> offset = Read<uint64_t>(b, at);
    std::optional<uint64_t> size = Read<uint64_t>(b, at + 8);
    std::optional<uint64_t> id_size = Read<uint64_t>(b, at + 16);
    if (!offset || !size || !id_size) return Truncated("offload bundle");
    std::optional<absl::string_view> id = Slice(b, at + 24, *id_size);
    std::optional<absl::string_view> contents = Slice(b, *offset, *size);
    if (!id || !contents) return Truncated("offload bundle entry");
    AddBundleEntry(*id, *contents, c);
    at += 24 + *id_size;
    end = std::max({end, at, *offset + *size});
  }
  return end;
}

// Every bundle in a section (HIP places one per code object, aligned).
absl::Status ParseBundles(absl::string_view b, Collector& c) {
  size_t at = b.find(kBundleMagic);
  while (at != absl::string_view::npos) {
    absl::StatusOr<uint64_t> size = ParseBundle(b.substr(at), c);
    if (!size.ok()) return size.status();
    at = b.find(kBundleMagic, at + std::max<uint64_t>(*size, 1));
  }
  return absl::OkStatus();
}

absl::Status ParseFatbin(absl::string_view b, Collector& c) {
  uint64_t at = 0;
  int entries = 0;
  while (b.size() - at >= 16) {
    uint32_t magic = *Read<uint32_t>(b, at);
    if (magic == 0) {  // padding between fatbins
      at += 8;
      continue;
    }
    if (magic != kFatbinMagic) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CUDA fatbin: bad magic 0x", absl::Hex(magic), " at ", at));
    }
    uint64_t header = *Read<uint16_t>(b, at + 6);
    uint64_t fat_size = *Read<uint64_t>(b, at + 8);
    std::optional<absl::string_view> body = Slice(b, at + header, fat_size);
    if (header < 16 || !body) return Truncated("CUDA fatbin");
    uint64_t e = 0;
    while (body->size() - e >= 32) {
      if (++entries > kMaxFatbinEntries) {
        return absl::InvalidArgumentError("CUDA fatbin: too many entries");
      }
      uint16_t kind = *Read<uint16_t>(*body, e);
      uint32_t entry_header = *Read<uint32_t>(*body, e + 4);
      uint64_t size = *Read<uint64_t>(*body, e + 8);
      uint32_t sm = *Read<uint32_t>(*body, e + 28);
      if (entry_header < 32 || !Slice(*body, e + entry_header, size)) {
        return Truncated("CUDA fatbin entry");
      }
      std::string name = absl::StrCat("fatbin entry sm_", sm);
      if (kind == kFatbinPtx || kind == kFatbinElf) {
        absl::StatusOr<DeviceImage> image =
            ImageFor("nvptx64", absl::StrCat("sm_", sm));
        if (image.ok() && kind == kFatbinPtx) image->kind = ImageKind::kPtx;
        c.Add(std::move(image), name);
      } else {
        c.out().skipped.push_back(
            absl::StrCat(name, ": unknown entry kind ", kind));
      }
      e += entry_header + size;
    }
    at += header + fat_size;
    at = (at + 7) / 8 * 8;
    if (at > b.size()) break;
  }
  return absl::OkStatus();
}

// Device ELFs clang-offload-wrapper embedded in a read-only section.
void ScanEmbeddedElfs(absl::string_view b, Collector& c) {
  size_t at = b.find(kElfMagic);
  while (at != absl::string_view::npos) {
    absl::string_view rest = b.substr(at);
    std::optional<ElfHeader> h = ReadElfHeader(rest);
    uint64_t size = h ? ElfSize(*h) : 0;
    if (h && h->shentsize == 64 && h->shoff <= rest.size() &&
        size <= rest.size() && !TripleArchOfMachine(h->machine).empty()) {
      c.Add(ImageOfDeviceElf(*h), "embedded device ELF");
      at = b.find(kElfMagic, at + std::max<uint64_t>(size, 1));
    } else {
      at = b.find(kElfMagic, at + 1);
    }
  }
}

absl::Status ParseElf(absl::string_view b, const ElfHeader& h, Collector& c) {
  if (h.shentsize != 64 && h.shnum != 0) {
    return absl::InvalidArgumentError("ELF: unexpected section header size");
  }
  auto header = [&](unsigned i) { return Slice(b, h.shoff + 64ull * i, 64); };
  std::optional<absl::string_view> strtab_header = header(h.shstrndx);
  if (h.shnum == 0 || !strtab_header) {
    if (h.machine == kEmCuda || h.machine == kEmAmdgpu) {
      c.Add(ImageOfDeviceElf(h), "device ELF");
    }
    return absl::OkStatus();
  }
  std::optional<absl::string_view> names =
      Slice(b, *Read<uint64_t>(*strtab_header, 24),
            *Read<uint64_t>(*strtab_header, 32));
  if (!names) return Truncated("ELF section names");
  bool openmp = false;
  std::vector<absl::string_view> rodata;
  for (unsigned i = 0; i < h.shnum; ++i) {
    std::optional<absl::string_view> sh = header(i);
    if (!sh) return Truncated("ELF section header");
    uint32_t name_at = *Read<uint32_t>(*sh, 0);
    uint32_t type = *Read<uint32_t>(*sh, 4);
    if (name_at >= names->size()) return Truncated("ELF section name");
    absl::string_view name = names->substr(name_at);
    name = name.substr(0, name.find('\0'));
    uint64_t size = *Read<uint64_t>(*sh, 32);
    constexpr uint32_t kNoBits = 8;
    std::optional<absl::string_view> data =
        type == kNoBits ? absl::string_view()
                        : Slice(b, *Read<uint64_t>(*sh, 24), size);
    if (!data) return Truncated(absl::StrCat("ELF section ", name));
    if (absl::StartsWith(name, kBundleMagic)) {
      AddBundleEntry(name.substr(kBundleMagic.size()), *data, c);
    } else if (name == ".nv_fatbin" || name == "__nv_relfatbin") {
      absl::Status s = ParseFatbin(*data, c);
      if (!s.ok()) return s;
    } else if (name == ".hip_fatbin" || name == ".llvm.offloading") {
      absl::Status s = ParseBundles(*data, c);
      if (!s.ok()) return s;
    } else if (name == "omp_offloading_entries") {
      openmp = true;
      c.out().offload_entries = static_cast<int>(size / 32);
    } else if (name == ".rodata" || absl::StartsWith(name, ".rodata.")) {
      rodata.push_back(*data);
    }
  }
  if (h.machine == kEmCuda || h.machine == kEmAmdgpu) {
    c.Add(ImageOfDeviceElf(h), "device ELF");
  }
  if (openmp) {
    for (absl::string_view data : rodata) ScanEmbeddedElfs(data, c);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BinaryImages> ReadBinaryImages(absl::string_view bytes) {
  BinaryImages out;
  Collector c(out);
  absl::Status s;
  if (absl::StartsWith(bytes, kBundleMagic)) {
    s = ParseBundles(bytes, c);
  } else if (Read<uint32_t>(bytes, 0) == kFatbinMagic) {
    s = ParseFatbin(bytes, c);
  } else if (std::optional<ElfHeader> h = ReadElfHeader(bytes)) {
    s = ParseElf(bytes, *h, c);
  } else {
    s = absl::InvalidArgumentError(
        "not an ELF64 little-endian file, a clang offload bundle or a CUDA "
        "fatbin");
  }
  if (!s.ok()) return s;
  return out;
}

}  // namespace ctxsel::images
