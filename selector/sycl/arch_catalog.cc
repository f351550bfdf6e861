#include "selector/sycl/arch_catalog.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "selector/suggest.h"

namespace ctxsel::sycl {
namespace {

enum class FamilyId {
#define SYCL_FAMILY(Id, Vendor, Kinds, Archs) Id,
#include "selector/sycl/arch_catalog.def"
};

struct FamilyRow {
  absl::string_view vendor;
  absl::string_view kinds;
  absl::string_view archs;
};

constexpr FamilyRow kFamilies[] = {
#define SYCL_FAMILY(Id, Vendor, Kinds, Archs) {Vendor, Kinds, Archs},
#include "selector/sycl/arch_catalog.def"
};

struct ArchRow {
  ArchId id;
  FamilyId family;
  absl::string_view name;
  absl::string_view isa;
  absl::string_view macro;
};

constexpr ArchRow kArchRows[] = {
#define SYCL_ARCH(Id, Family, Name, Isa, Macro) \
  {ArchId::Id, FamilyId::Family, Name, Isa, Macro},
#include "selector/sycl/arch_catalog.def"
};

struct AliasRow {
  ArchId id;
  absl::string_view alias;
};

constexpr AliasRow kAliasRows[] = {
#define SYCL_ARCH_ALIAS(Id, Alias) {ArchId::Id, Alias},
#include "selector/sycl/arch_catalog.def"
};

struct RunsOnRow {
  ArchId id;
  ArchId device;
};

constexpr RunsOnRow kRunsOnRows[] = {
#define SYCL_ARCH_RUNS_ON(Id, DeviceId) {ArchId::Id, ArchId::DeviceId},
#include "base/status_macros.h"
#include "selector/sycl/arch_catalog.def"
};

std::vector<absl::string_view> Words(absl::string_view list) {
  return absl::StrSplit(list, ' ', absl::SkipEmpty());
}

std::vector<ArchInfo> BuildCatalog() {
  std::vector<ArchInfo> archs;
  for (const ArchRow& row : kArchRows) {
    const FamilyRow& family = kFamilies[static_cast<int>(row.family)];
    archs.push_back({row.id, row.name, row.isa, row.macro, family.vendor,
                     Words(family.kinds), Words(family.archs),
                     /*aliases=*/{}, /*device=*/row.id});
  }
  for (const AliasRow& row : kAliasRows) {
    archs[static_cast<int>(row.id)].aliases.push_back(row.alias);
  }
  for (const RunsOnRow& row : kRunsOnRows) {
    archs[static_cast<int>(row.id)].device = row.device;
  }
  return archs;
}

// Canonical names, aliases and macros to their row.
const absl::flat_hash_map<absl::string_view, ArchId>& Index() {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, ArchId>;
    for (const ArchInfo& arch : AllArchs()) {
      map->emplace(arch.name, arch.id);
      map->emplace(arch.macro, arch.id);
      for (absl::string_view alias : arch.aliases) map->emplace(alias, arch.id);
    }
    return map;
  }();
  return *index;
}

size_t CommonPrefix(absl::string_view a, absl::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() &&
         absl::ascii_tolower(a[n]) == absl::ascii_tolower(b[n])) {
    ++n;
  }
  return n;
}

}  // namespace

const std::vector<ArchInfo>& AllArchs() {
  static const auto* archs = new std::vector<ArchInfo>(BuildCatalog());
  return *archs;
}

const ArchInfo& GetArch(ArchId id) { return AllArchs()[static_cast<int>(id)]; }

const ArchInfo* FindArch(absl::string_view name) {
  auto it = Index().find(name);
  return it == Index().end() ? nullptr : &GetArch(it->second);
}

absl::StatusOr<const ArchInfo*> LookupArch(absl::string_view name) {
  if (const ArchInfo* arch = FindArch(name)) return arch;
  return absl::NotFoundError(absl::StrCat(
      "unknown SYCL architecture '", name,
      "'; nearest: ", absl::StrJoin(NearestArchNames(name), ", ")));
}

std::vector<std::string> NearestArchNames(absl::string_view name,
                                          size_t max_count) {
  // Names containing `name` ("gfx90a" in "amd_gpu_gfx90a") come first, then
  // by distance and longer common prefix; stable sort keeps table order.
  struct Scored {
    bool contains;
    size_t distance;
    size_t prefix;
    absl::string_view name;
  };
  std::vector<Scored> scored;
  const std::string lower_name = absl::AsciiStrToLower(name);
  auto add = [&](absl::string_view candidate) {
    scored.push_back(
        {absl::StrContains(absl::AsciiStrToLower(candidate), lower_name),
         selector::internal::EditDistance(name, candidate),
         CommonPrefix(name, candidate), candidate});
  };
  for (const ArchInfo& arch : AllArchs()) {
    add(arch.name);
    for (absl::string_view alias : arch.aliases) add(alias);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) {
                     if (a.contains != b.contains) return a.contains;
                     if (a.distance != b.distance) {
                       return a.distance < b.distance;
                     }
                     return a.prefix > b.prefix;
                   });
  std::vector<std::string> nearest;
  for (size_t i = 0; i < scored.size() && i < max_count; ++i) {
    nearest.emplace_back(scored[i].name);
  }
  return nearest;
}

bool SameDevices(const ArchInfo& a, const ArchInfo& b) {
  return a.device == b.device;
}

std::vector<absl::string_view> DeviceArchNames(const ArchInfo& arch) {
  std::vector<absl::string_view> names;
  for (const ArchInfo& other : AllArchs()) {
    if (!SameDevices(arch, other)) continue;
    names.push_back(other.name);
    names.insert(names.end(), other.aliases.begin(), other.aliases.end());
  }
  return names;
}

absl::StatusOr<selector::DeviceTraits> DeviceTraitsFor(absl::string_view name) {
  CTXSEL_ASSIGN_OR_RETURN(const ArchInfo* arch, LookupArch(name));
  selector::DeviceTraits traits;
  for (absl::string_view kind : arch->kinds) traits.kind.emplace(kind);
  for (absl::string_view a : arch->archs) traits.arch.emplace(a);
  for (absl::string_view a : DeviceArchNames(*arch)) traits.arch.emplace(a);
  if (!arch->vendor.empty()) traits.vendor.emplace(arch->vendor);
  for (const ArchInfo& other : AllArchs()) {
    if (SameDevices(*arch, other) && !other.isa.empty()) {
      traits.isa.emplace(other.isa);
    }
  }
  return traits;
}

}  // namespace ctxsel::sycl
