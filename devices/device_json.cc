#include "devices/device_json.h"

#include <functional>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "devices/arch_traits.h"

namespace ctxsel {
namespace {

using nlohmann::json;
using Reader = std::function<absl::Status(const json&, DeviceInfo&)>;

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

absl::Status ReadString(const json& v, std::string& out) {
  if (!v.is_string()) return Invalid("expected a string");
  out = v.get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadList(const json& v, std::vector<std::string>& out) {
  if (!v.is_array()) return Invalid("expected an array of strings");
  for (const json& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return Invalid("expected an array of non-empty strings");
    }
    out.push_back(item.get<std::string>());
  }
  return absl::OkStatus();
}

// A non-negative integer, as a number or (proto3 JSON for 64-bit) a string.
template <typename Int>
absl::Status ReadCount(const json& v, Int& out) {
  int64_t value = -1;
  if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (v.is_string() && !absl::SimpleAtoi(v.get<std::string>(), &value)) {
    value = -1;
  }
  if (value < 0) return Invalid("expected a non-negative integer");
  out = static_cast<Int>(value);
  return absl::OkStatus();
}

absl::Status ReadFraction(const json& v, double& out) {
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
    return Invalid("expected a number in [0, 1]");
  }
  out = v.get<double>();
  return absl::OkStatus();
}

// "healthy", "degraded", "unhealthy", or the API enum's names
// ("DEVICE_HEALTH_DEGRADED", proto3 JSON).
absl::Status ReadHealth(const json& v, DeviceHealth& out) {
  if (v.is_string()) {
    std::string name = v.get<std::string>();
    if (name.rfind("DEVICE_HEALTH_", 0) == 0) {
      name = absl::AsciiStrToLower(name.substr(14));
    }
    for (DeviceHealth h : {DeviceHealth::kHealthy, DeviceHealth::kDegraded,
                           DeviceHealth::kUnhealthy}) {
      if (name == DeviceHealthName(h)) {
        out = h;
        return absl::OkStatus();
      }
    }
  }
  return Invalid("expected \"healthy\", \"degraded\" or \"unhealthy\"");
}

absl::Status ReadAttributes(const json& v,
                            std::map<std::string, std::string>& out) {
  if (!v.is_object()) return Invalid("expected an object of strings");
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) return Invalid(key + ": expected a string");
    out[key] = value.get<std::string>();
  }
  return absl::OkStatus();
}

// Reads the keys of `object` with `readers`; unknown keys are errors.
absl::Status ReadObject(const json& object,
                        const std::map<std::string, Reader>& readers,
                        DeviceInfo& d) {
  if (!object.is_object()) return Invalid("expected an object");
  for (const auto& [key, value] : object.items()) {
    auto reader = readers.find(key);
    if (reader == readers.end()) return Invalid(key + ": unknown field");
    absl::Status s = reader->second(value, d);
    if (!s.ok()) {
      // A nested object's error already starts with its own field name.
      bool nested = value.is_object() && key != "attributes";
      return Invalid(absl::StrCat(key, nested ? "." : ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

const std::map<std::string, Reader>& TraitFields() {
  static const auto* fields = new std::map<std::string, Reader>{
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  {Name, [](const json& v, DeviceInfo& d) { return ReadList(v, d.member); }},
#include "selector/device_traits.def"

  };
  return *fields;
}

const std::map<std::string, Reader>& AgentFields() {
  static const auto* fields = new std::map<std::string, Reader>{
      {"name",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.name); }},
      {"backend",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.backend); }},
      {"threads",
       [](const json& v, DeviceInfo& d) { return ReadCount(v, d.threads); }},
      {"numa_nodes",
       [](const json& v, DeviceInfo& d) { return ReadCount(v, d.numa_nodes); }},
      {"attributes",
       [](const json& v, DeviceInfo& d) {
         return ReadAttributes(v, d.attributes);
       }},
  };
  return *fields;
}

// ctxsel.v1.Device's fields, under their proto and proto3-JSON names.
const std::map<std::string, Reader>& DeviceFields() {
  static const auto* fields = [] {
    auto* f = new std::map<std::string, Reader>{
        {"id",
         [](const json& v, DeviceInfo& d) { return ReadString(v, d.id); }},
        {"node",
         [](const json& v, DeviceInfo& d) { return ReadString(v, d.node); }},
        {"index",
         [](const json& v, DeviceInfo& d) {
           if (!v.is_number_integer()) return Invalid("expected an integer");
           d.index = v.get<int>();
           return absl::OkStatus();
         }},
        {"traits",
         [](const json& v, DeviceInfo& d) {
           return ReadObject(v, TraitFields(), d);
         }},
        {"sycl_architecture",
         [](const json& v, DeviceInfo& d) {
           return ReadString(v, d.sycl_architecture);
         }},
        {"memory_bytes",
         [](const json& v, DeviceInfo& d) {
           return ReadCount(v, d.memory_bytes);
         }},
        {"compute_units",
         [](const json& v, DeviceInfo& d) {
           return ReadCount(v, d.compute_units);
         }},
        {"utilisation",
         [](const json& v, DeviceInfo& d) {
           return ReadFraction(v, d.utilisation);
         }},
        {"device_class",
         [](const json&, DeviceInfo&) { return absl::OkStatus(); }},
        {"claim_capacity",
         [](const json& v, DeviceInfo& d) {
           return ReadCount(v, d.claim_capacity);
         }},
        {"uuid",
         [](const json& v, DeviceInfo& d) { return ReadString(v, d.uuid); }},
        {"pci_bus_id",
         [](const json& v, DeviceInfo& d) {
           return ReadString(v, d.pci_bus_id);
         }},
        {"vendor_index",
         [](const json& v, DeviceInfo& d) {
           return ReadCount(v, d.vendor_index);
         }},
        {"health",
         [](const json& v, DeviceInfo& d) { return ReadHealth(v, d.health); }},
        {"health_reason",
         [](const json& v, DeviceInfo& d) {
           return ReadString(v, d.health_reason);
         }},
        {"parent",
         [](const json& v, DeviceInfo& d) { return ReadString(v, d.parent); }},
        {"agent",
         [](const json& v, DeviceInfo& d) {
           return ReadObject(v, AgentFields(), d);
         }},
    };
    (*f)["syclArchitecture"] = f->at("sycl_architecture");
    (*f)["memoryBytes"] = f->at("memory_bytes");
    (*f)["computeUnits"] = f->at("compute_units");
    (*f)["deviceClass"] = f->at("device_class");
    (*f)["claimCapacity"] = f->at("claim_capacity");
    (*f)["pciBusId"] = f->at("pci_bus_id");
    (*f)["vendorIndex"] = f->at("vendor_index");
    (*f)["healthReason"] = f->at("health_reason");
    return f;
  }();
  return *fields;
}

// {"kind": [...], "arch": [...], ...}, one key per trait.
json TraitsJson(const DeviceInfo& d) {
  json traits = json::object();
#define DEVICE_TRAIT(member, Id, Name, Weight) traits[Name] = d.member;
#include "selector/device_traits.def"
  return traits;
}

}  // namespace

json DeviceToJson(const DeviceInfo& d) {
  json agent = {{"name", d.name},
                {"backend", d.backend},
                {"threads", d.threads},
                {"numa_nodes", d.numa_nodes},
                {"attributes", json::object()}};
  for (const auto& [key, value] : d.attributes)
    agent["attributes"][key] = value;
  json out = {{"id", d.id},
              {"node", d.node},
              {"index", d.index},
              {"traits", TraitsJson(d)},
              {"sycl_architecture", d.sycl_architecture},
              {"memory_bytes", d.memory_bytes},
              {"compute_units", d.compute_units},
              {"utilisation", d.utilisation},
              {"claim_capacity", d.claim_capacity},
              {"uuid", d.uuid},
              {"pci_bus_id", d.pci_bus_id},
              {"agent", agent}};
  if (d.vendor_index >= 0) out["vendor_index"] = d.vendor_index;
  if (d.health != DeviceHealth::kHealthy) {
    out["health"] = DeviceHealthName(d.health);
    out["health_reason"] = d.health_reason;
  }
  if (!d.parent.empty()) out["parent"] = d.parent;
  return out;
}

absl::StatusOr<DeviceInfo> DeviceFromJson(const json& object,
                                          const std::string& where) {
  DeviceInfo d;
  if (absl::Status s = ReadObject(object, DeviceFields(), d); !s.ok()) {
    std::string separator = object.is_object() ? "." : ": ";
    return Invalid(absl::StrCat(where, separator, s.message()));
  }
  if (absl::Status s = NormalizeDeviceInfo(d); !s.ok()) {
    return Invalid(absl::StrCat(where, ".", s.message()));
  }
  if (d.backend.empty()) d.backend = "file";
  return d;
}

absl::StatusOr<std::vector<DeviceInfo>> ParseDevices(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return Invalid(absl::StrCat("devices file: ", e.what()));
  }
  const json* list = &doc;
  std::string where;
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "devices") return Invalid(key + ": unknown field");
    }
    if (!doc.contains("devices")) return Invalid("missing 'devices'");
    list = &doc["devices"];
    where = "devices";
  }
  if (!list->is_array()) {
    return Invalid("expected {\"devices\": [...]} or an array");
  }
  std::vector<DeviceInfo> devices;
  for (size_t i = 0; i < list->size(); ++i) {
    CTXSEL_ASSIGN_OR_RETURN(
        DeviceInfo d,
        DeviceFromJson((*list)[i], absl::StrCat(where, "[", i, "]")));
    devices.push_back(std::move(d));
  }
  return devices;
}

std::string DevicesToJsonText(const std::vector<DeviceInfo>& devices) {
  json list = json::array();
  for (const DeviceInfo& d : devices) list.push_back(DeviceToJson(d));
  return json{{"devices", list}}.dump(2);
}

}  // namespace ctxsel
