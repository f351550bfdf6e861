#include "images/device_image.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::images {
namespace {

struct TripleRow {
  absl::string_view triple_arch;
  unsigned e_machine;
  ImageKind kind;
  absl::string_view sycl;  // a name, or a prefix ending in '_'
};

constexpr TripleRow kTriples[] = {
#define IMAGE_TRIPLE(Id, TripleArch, EMachine, Kind, Sycl) \
  {TripleArch, EMachine, ImageKind::Kind, Sycl},
#include "images/image_targets.def"
};

struct MachRow {
  unsigned value;
  absl::string_view processor;
};

constexpr MachRow kAmdgpuMachs[] = {
#define AMDGPU_MACH(Value, Processor) {Value, Processor},
#include "images/image_targets.def"
};

constexpr struct {
  ImageKind kind;
  absl::string_view name;
  absl::string_view triple_arch;  // the table row its targets go through
} kKinds[] = {
    {ImageKind::kHost, "host", ""},
    {ImageKind::kCubin, "cubin", "nvptx64"},
    {ImageKind::kPtx, "ptx", "nvptx64"},
    {ImageKind::kCodeObject, "amdgcn", "amdgcn"},
    {ImageKind::kSpirv, "spirv", "spir64"},
};

const TripleRow* FindTriple(absl::string_view triple_arch) {
  for (const TripleRow& row : kTriples) {
    if (row.triple_arch == triple_arch) return &row;
  }
  return nullptr;
}

// "sm_86" -> 86, "sm_90a" -> 90 with `arch_specific`; nullopt otherwise.
std::optional<int> SmNumber(absl::string_view isa,
                            bool* arch_specific = nullptr) {
  if (!absl::ConsumePrefix(&isa, "sm_")) return std::nullopt;
  bool specific = absl::ConsumeSuffix(&isa, "a");
  int n = 0;
  if (isa.empty() || !absl::SimpleAtoi(isa, &n) || n <= 0) return std::nullopt;
  if (arch_specific != nullptr) *arch_specific = specific;
  return n;
}

// The device's highest CUDA sm (from its `isa` traits), if it has one.
std::optional<int> DeviceSm(const selector::DeviceTraits& traits,
                            std::string* name) {
  std::optional<int> best;
  for (const std::string& isa : traits.isa) {
    std::optional<int> n = SmNumber(isa);
    if (n && (!best || *n > *best)) {
      best = n;
      *name = absl::StrCat("sm_", *n);
    }
  }
  return best;
}

bool ValidProcessor(ImageKind kind, absl::string_view processor) {
  switch (kind) {
    case ImageKind::kCubin:
    case ImageKind::kPtx:
      return SmNumber(processor).has_value();
    case ImageKind::kCodeObject:
      return absl::StartsWith(processor, "gfx") && processor.size() > 3;
    default:
      return true;
  }
}

}  // namespace

absl::string_view KindName(ImageKind kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "";
}

std::string ImageId(const DeviceImage& image) {
  return absl::StrCat(KindName(image.kind), ":", image.target);
}

absl::StatusOr<DeviceImage> ImageFor(absl::string_view triple_arch,
                                     absl::string_view processor,
                                     absl::string_view triple) {
  const TripleRow* row = FindTriple(triple_arch);
  if (row == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no device image target for triple arch '", triple_arch,
                     "' (images/image_targets.def)"));
  }
  DeviceImage image;
  image.kind = row->kind;
  if (!absl::EndsWith(row->sycl, "_")) {
    image.target = std::string(triple.empty() ? triple_arch : triple);
    image.sycl_architecture = std::string(row->sycl);
    return image;
  }
  if (processor.empty() && row->kind == ImageKind::kSpirv) {
    // Generic SPIR-V: any Intel GPU's driver JIT-compiles it.
    image.target = std::string(row->triple_arch);
    return image;
  }
  // A null string_view splits into no parts at all.
  std::vector<std::string> parts = absl::StrSplit(processor, ':');
  if (parts.empty() || !ValidProcessor(row->kind, parts[0])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device image for ", triple_arch, ": bad processor '", processor, "'"));
  }
  image.target = std::string(processor);
  image.isa = parts[0];
  image.features.assign(parts.begin() + 1, parts.end());
  if (const sycl::ArchInfo* arch =
          sycl::FindArch(absl::StrCat(row->sycl, parts[0]));
      arch != nullptr) {
    image.sycl_architecture = std::string(arch->name);
  }
  return image;
}

absl::StatusOr<DeviceImage> ParseImageId(absl::string_view id) {
  std::pair<absl::string_view, absl::string_view> kt =
      absl::StrSplit(id, absl::MaxSplits(':', 1));
  for (const auto& k : kKinds) {
    if (k.name != kt.first) continue;
    if (kt.second.empty()) break;
    absl::StatusOr<DeviceImage> image =
        k.kind == ImageKind::kHost
            ? ImageFor(kt.second.substr(0, kt.second.find('-')), "", kt.second)
            : ImageFor(k.triple_arch,
                       kt.second == k.triple_arch ? "" : kt.second);
    if (!image.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("image '", id, "': ", image.status().message()));
    }
    image->kind = k.kind;
    return image;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "image '", id,
      "': not KIND:TARGET with KIND host, cubin, ptx, amdgcn or spirv"));
}

absl::string_view AmdgpuProcessor(unsigned mach) {
  for (const MachRow& row : kAmdgpuMachs) {
    if (row.value == mach) return row.processor;
  }
  return "";
}

absl::string_view TripleArchOfMachine(unsigned e_machine) {
  for (const TripleRow& row : kTriples) {
    if (row.e_machine == e_machine && e_machine != 0) return row.triple_arch;
  }
  return "";
}

Fit ImageFit(const DeviceImage& image, const selector::DeviceTraits& traits,
             std::string* why) {
  std::string ignored;
  std::string& reason = why != nullptr ? *why : ignored;
  reason.clear();
  switch (image.kind) {
    case ImageKind::kHost: {
      absl::string_view arch =
          absl::string_view(image.target).substr(0, image.target.find('-'));
      if (traits.kind.contains("host") &&
          traits.arch.contains(std::string(arch))) {
        return Fit::kExact;
      }
      reason = absl::StrCat("built for the host (", arch, ")");
      return Fit::kNone;
    }
    case ImageKind::kCubin:
    case ImageKind::kPtx: {
      bool specific = false;
      std::optional<int> want = SmNumber(image.isa, &specific);
      std::string device_sm;
      std::optional<int> have = DeviceSm(traits, &device_sm);
      const bool ptx = image.kind == ImageKind::kPtx;
      if (want && have && (*want == *have || !specific)) {
        if (ptx && *have >= *want) {
          reason =
              absl::StrCat("PTX ", image.isa,
                           ", JIT-compiled by the CUDA driver for ", device_sm);
          return Fit::kGeneric;
        }
        if (!ptx && traits.isa.contains(image.isa)) return Fit::kExact;
        // A cubin runs on the later minor versions of its major one.
        if (!ptx && *have / 10 == *want / 10 && *have > *want) {
          reason = absl::StrCat("cubin ", image.isa, " runs on ", device_sm,
                                " (same major version)");
          return Fit::kGeneric;
        }
      }
      reason = absl::StrCat("built for ", image.isa);
      return Fit::kNone;
    }
    case ImageKind::kCodeObject:
      // Agents do not report xnack/sramecc modes: the features are kept
      // with the image but not checked.
      if (traits.isa.contains(image.isa)) return Fit::kExact;
      reason = absl::StrCat("built for ", image.target);
      return Fit::kNone;
    case ImageKind::kSpirv:
      if (!traits.vendor.contains("intel") || !traits.kind.contains("gpu")) {
        reason = "SPIR-V for Intel GPUs";
        return Fit::kNone;
      }
      if (image.isa.empty()) {
        reason = "SPIR-V, JIT-compiled by the driver";
        return Fit::kGeneric;
      }
      if (traits.isa.contains(image.isa)) return Fit::kExact;
      reason = absl::StrCat("built for ", image.target);
      return Fit::kNone;
  }
  return Fit::kNone;
}

const DeviceImage* BestImage(const std::vector<DeviceImage>& images,
                             const selector::DeviceTraits& traits, Fit* fit,
                             std::string* why) {
  const DeviceImage* generic = nullptr;
  std::string generic_why;
  for (const DeviceImage& image : images) {
    std::string reason;
    Fit f = ImageFit(image, traits, &reason);
    if (f == Fit::kExact) {
      if (fit != nullptr) *fit = f;
      if (why != nullptr) why->clear();
      return &image;
    }
    if (f == Fit::kGeneric && generic == nullptr) {
      generic = &image;
      generic_why = std::move(reason);
    }
  }
  if (fit != nullptr) *fit = generic != nullptr ? Fit::kGeneric : Fit::kNone;
  if (why != nullptr) *why = std::move(generic_why);
  return generic;
}

}  // namespace ctxsel::images
