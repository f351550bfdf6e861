#include "server/placement/device_class.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/device_traits.h"
#include "server/fleet/fleet_context.h"
#include "server/fleet/node_proto.h"

namespace ctxsel::server::placement {
namespace {

std::vector<std::string> Sorted(const selector::NameSet& names) {
  std::vector<std::string> out(names.begin(), names.end());
  std::sort(out.begin(), out.end());
  return out;
}

// The device trait selectors in vocabulary order with their names sorted.
std::vector<std::pair<const char*, std::vector<std::string>>> Sets(
    const selector::DeviceTraits& t) {
  std::vector<std::pair<const char*, std::vector<std::string>>> sets;
  for (const selector::DeviceTraitField& field : selector::kDeviceTraitFields) {
    sets.emplace_back(field.name.data(), Sorted(t.*field.member));
  }
  return sets;
}

void SortSlots(std::vector<std::pair<int32_t, const DeviceClass*>>& slots) {
  std::sort(slots.begin(), slots.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace

selector::DeviceCapacity ClassCapacityOf(const Device& device) {
  if (device.traits.kind.contains("host")) return {};
  return {device.properties.memory_bytes, device.properties.compute_units};
}

std::string CapacityText(const selector::DeviceCapacity& capacity) {
  std::vector<std::string> parts;
  if (capacity.memory_bytes > 0) {
    const uint64_t mib = capacity.memory_bytes >> 20;
    parts.push_back(mib % 1024 == 0 || mib >= 10 * 1024
                        ? absl::StrCat(mib / 1024, " GiB")
                        : absl::StrCat(mib, " MiB"));
  }
  if (capacity.compute_units > 0) {
    parts.push_back(absl::StrCat(capacity.compute_units, " compute units"));
  }
  return parts.empty() ? "capacity not reported" : absl::StrJoin(parts, ", ");
}

std::string DeviceClassKey(const selector::DeviceTraits& traits,
                           const std::string& sycl_architecture,
                           const selector::DeviceCapacity& capacity) {
  std::string key;
  for (const auto& [name, values] : Sets(traits)) {
    // '\x1f' and '\x1e' cannot appear in reported names without making the
    // key ambiguous only if an agent sends control characters; harmless.
    absl::StrAppend(&key, name, "\x1f", absl::StrJoin(values, "\x1f"), "\x1e");
  }
  absl::StrAppend(&key, "sycl\x1f", sycl_architecture, "\x1e");
  absl::StrAppend(&key, capacity.memory_bytes, "\x1f", capacity.compute_units);
  return key;
}

std::string DeviceClassName(const selector::DeviceTraits& traits) {
  std::vector<std::string> selectors;
  for (const auto& [name, values] : Sets(traits)) {
    if (values.empty()) continue;
    std::vector<std::string> quoted;
    for (const std::string& v : values)
      quoted.push_back(absl::StrCat("\"", v, "\""));
    selectors.push_back(
        absl::StrCat(name, "(", absl::StrJoin(quoted, ", "), ")"));
  }
  std::string text =
      absl::StrCat("device={", absl::StrJoin(selectors, ", "), "}");
  // The engine's canonical form drops needless quotes and orders names.
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(text);
  return parsed.ok() ? parsed->ToString() : text;
}

std::string DeviceClassShortName(const selector::DeviceTraits& traits,
                                 const std::string& sycl_architecture) {
  const bool cpu = traits.kind.count("cpu") > 0;
  if (!cpu && !sycl_architecture.empty()) return sycl_architecture;
  const std::vector<std::string> arch = Sorted(traits.arch);
  if (!cpu) {
    std::string kind = "device";
    for (const std::string& k : Sorted(traits.kind)) {
      if (k != "host" && k != "nohost" && k != "any") kind = k;
    }
    return arch.empty() ? kind : absl::StrCat(kind, "/", arch.front());
  }
  // The most capable x86-64 level the CPU reports, "x86_64_v4" > "_v3".
  std::string base = sycl_architecture;
  for (const std::string& isa : Sorted(traits.isa)) {
    if (absl::StartsWith(isa, "x86_64_v")) base = isa;
  }
  if (base.empty()) base = arch.empty() ? "cpu" : arch.front();
  // Widest first: the first one the CPU has names its vector unit.
  static constexpr std::pair<const char*, const char*> kVectorUnits[] = {
      {"amx_tile", "amx"}, {"avx512f", "avx512"}, {"sve2", "sve2"},
      {"sve", "sve"},      {"avx2", "avx2"},      {"avx", "avx"},
      {"neon", "neon"},    {"asimd", "neon"},     {"sse4_2", "sse4_2"}};
  for (const auto& [isa, unit] : kVectorUnits) {
    if (traits.isa.count(isa) > 0) return absl::StrCat(base, "/", unit);
  }
  return base;
}

DeviceClass MakeDeviceClass(int id, selector::DeviceTraits traits,
                            std::string sycl_architecture,
                            selector::DeviceCapacity capacity) {
  DeviceClass c;
  c.id = id;
  c.key = DeviceClassKey(traits, sycl_architecture, capacity);
  c.capacity = capacity;
  c.name = DeviceClassName(traits);
  c.short_name = DeviceClassShortName(traits, sycl_architecture);
  c.traits = std::move(traits);
  c.sycl_architecture = std::move(sycl_architecture);
  TraitsToProto(c.traits, c.proto.mutable_traits());
  c.proto.set_sycl_architecture(c.sycl_architecture);
  c.proto.set_device_class(c.name);
  c.proto.set_device_class_short_name(c.short_name);
  return c;
}

selector::TargetDevicesView NodeLayout::TargetDevicesFor(int class_id) const {
  return selector::TargetDevicesView(target_devices,
                                     default_device_by_class.at(class_id));
}

std::string NodeLayoutKey(
    std::vector<std::pair<int32_t, const DeviceClass*>> slots) {
  SortSlots(slots);
  return absl::StrJoin(slots, ",", [](std::string* out, const auto& slot) {
    absl::StrAppend(out, slot.first, ":", slot.second->id);
  });
}

std::string NodeLayoutText(
    std::vector<std::pair<int32_t, const DeviceClass*>> slots) {
  SortSlots(slots);
  std::string text;
  for (size_t i = 0; i < slots.size();) {
    // A run of consecutive device numbers of one short name; the host (-1)
    // stands alone, so "-1-0" never appears.
    size_t end = i + 1;
    while (end < slots.size() && slots[i].first >= 0 &&
           slots[end].first == slots[end - 1].first + 1 &&
           slots[end].second->short_name == slots[i].second->short_name) {
      ++end;
    }
    if (!text.empty()) text += ',';
    absl::StrAppend(&text, slots[i].first);
    if (end - i > 1) absl::StrAppend(&text, "-", slots[end - 1].first);
    absl::StrAppend(&text, ":", slots[i].second->short_name);
    i = end;
  }
  return text;
}

NodeLayout MakeNodeLayout(
    int id, std::vector<std::pair<int32_t, const DeviceClass*>> slots) {
  SortSlots(slots);
  NodeLayout layout;
  layout.id = id;
  layout.key = NodeLayoutKey(slots);
  layout.text = NodeLayoutText(slots);
  std::vector<NodeSlot> traits;
  for (const auto& [index, c] : slots) {
    traits.emplace_back(index, &c->traits);
    layout.default_device_by_class.try_emplace(c->id, index);
  }
  layout.target_devices = NodeTargetDevices(traits, /*default_index=*/0);
  layout.slots = std::move(slots);
  return layout;
}

}  // namespace ctxsel::server::placement
