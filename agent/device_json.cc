#include "agent/device_json.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "agent/arch_traits.h"

namespace ctxsel::agent {
namespace {

using nlohmann::json;
using StringList = std::vector<std::string>;

absl::Status FieldError(const std::string& where, const std::string& key,
                        const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ".", key, ": ", what));
}

absl::Status ReadString(const json& v, std::string& out) {
  if (!v.is_string()) return absl::InvalidArgumentError("expected a string");
  out = v.get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadList(const json& v, StringList& out) {
  if (!v.is_array()) {
    return absl::InvalidArgumentError("expected an array of strings");
  }
  for (const json& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return absl::InvalidArgumentError(
          "expected an array of non-empty strings");
    }
    out.push_back(item.get<std::string>());
  }
  return absl::OkStatus();
}

template <typename Int>
absl::Status ReadCount(const json& v, Int& out) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    return absl::InvalidArgumentError("expected a non-negative integer");
  }
  out = static_cast<Int>(v.get<int64_t>());
  return absl::OkStatus();
}

absl::Status ReadFraction(const json& v, double& out) {
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
    return absl::InvalidArgumentError("expected a number in [0, 1]");
  }
  out = v.get<double>();
  return absl::OkStatus();
}

absl::Status ReadAttributes(const json& v,
                            std::map<std::string, std::string>& out) {
  if (!v.is_object()) {
    return absl::InvalidArgumentError("expected an object of strings");
  }
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", key, "': expected a string"));
    }
    out[key] = value.get<std::string>();
  }
  return absl::OkStatus();
}

using FieldReader = std::function<absl::Status(const json&, DeviceInfo&)>;

// The device message's fields, by JSON key. `node` and `index` are accepted
// for symmetry with --print --json but the agent sets them itself.
const std::map<std::string, FieldReader>& Fields() {
  static const auto* fields = new std::map<std::string, FieldReader>{
      {"id", [](const json& v, DeviceInfo& d) { return ReadString(v, d.id); }},
      {"node",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.node); }},
      {"index",
       [](const json& v, DeviceInfo& d) {
         if (!v.is_number_integer()) {
           return absl::InvalidArgumentError("expected an integer");
         }
         d.index = v.get<int>();
         return absl::OkStatus();
       }},
      {"sycl_architecture",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.sycl_arch); }},
      {"kind",
       [](const json& v, DeviceInfo& d) { return ReadList(v, d.kind); }},
      {"arch",
       [](const json& v, DeviceInfo& d) { return ReadList(v, d.arch); }},
      {"isa", [](const json& v, DeviceInfo& d) { return ReadList(v, d.isa); }},
      {"vendor",
       [](const json& v, DeviceInfo& d) { return ReadList(v, d.vendor); }},
      {"extension",
       [](const json& v, DeviceInfo& d) { return ReadList(v, d.extension); }},
      {"name",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.name); }},
      {"backend",
       [](const json& v, DeviceInfo& d) { return ReadString(v, d.backend); }},
      {"attributes",
       [](const json& v, DeviceInfo& d) {
         return ReadAttributes(v, d.attributes);
       }},
      {"memory_bytes",
       [](const json& v, DeviceInfo& d) {
         return ReadCount(v, d.memory_bytes);
       }},
      {"compute_units",
       [](const json& v, DeviceInfo& d) {
         return ReadCount(v, d.compute_units);
       }},
      {"threads",
       [](const json& v, DeviceInfo& d) { return ReadCount(v, d.threads); }},
      {"numa_nodes",
       [](const json& v, DeviceInfo& d) { return ReadCount(v, d.numa_nodes); }},
      {"utilisation",
       [](const json& v, DeviceInfo& d) {
         return ReadFraction(v, d.utilisation);
       }},
  };
  return *fields;
}

}  // namespace

json DeviceToJson(const DeviceInfo& d) {
  json j = {{"id", d.id},
            {"node", d.node},
            {"index", d.index},
            {"sycl_architecture", d.sycl_arch},
            {"kind", d.kind},
            {"arch", d.arch},
            {"isa", d.isa},
            {"vendor", d.vendor},
            {"extension", d.extension},
            {"name", d.name},
            {"backend", d.backend},
            {"memory_bytes", d.memory_bytes},
            {"compute_units", d.compute_units},
            {"threads", d.threads},
            {"numa_nodes", d.numa_nodes},
            {"utilisation", d.utilisation}};
  j["attributes"] = json::object();
  for (const auto& [key, value] : d.attributes) j["attributes"][key] = value;
  return j;
}

absl::StatusOr<DeviceInfo> DeviceFromJson(const json& object,
                                          const std::string& where) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected an object"));
  }
  DeviceInfo d;
  for (const auto& [key, value] : object.items()) {
    auto field = Fields().find(key);
    if (field == Fields().end()) return FieldError(where, key, "unknown field");
    absl::Status s = field->second(value, d);
    if (!s.ok()) return FieldError(where, key, std::string(s.message()));
  }
  if (!d.sycl_arch.empty()) {
    absl::Status s = ApplyArchTraits(d);
    if (!s.ok()) {
      return FieldError(
          where, "sycl_architecture",
          absl::StrCat("unknown SYCL architecture '", d.sycl_arch, "'"));
    }
  } else if (d.kind.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": needs sycl_architecture or kind"));
  }
  if (d.backend.empty()) d.backend = "file";
  return d;
}

absl::StatusOr<std::vector<DeviceInfo>> ParseDevices(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("devices file: ", e.what()));
  }
  const json* list = &doc;
  std::string where = "";
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "devices")
        return FieldError("devices file", key, "unknown field");
    }
    if (!doc.contains("devices")) {
      return absl::InvalidArgumentError("devices file: missing 'devices'");
    }
    list = &doc["devices"];
    where = "devices";
  }
  if (!list->is_array()) {
    return absl::InvalidArgumentError(
        "devices file: expected {\"devices\": [...]} or an array");
  }
  std::vector<DeviceInfo> devices;
  for (size_t i = 0; i < list->size(); ++i) {
    absl::StatusOr<DeviceInfo> d =
        DeviceFromJson((*list)[i], absl::StrCat(where, "[", i, "]"));
    if (!d.ok()) return d.status();
    devices.push_back(*std::move(d));
  }
  return devices;
}

std::string DevicesToJsonText(const std::vector<DeviceInfo>& devices) {
  json list = json::array();
  for (const DeviceInfo& d : devices) list.push_back(DeviceToJson(d));
  return json{{"devices", list}}.dump(2);
}

}  // namespace ctxsel::agent
