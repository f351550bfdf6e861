#include "client/cli/eval_context.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "selector/device_traits.h"

namespace ctxsel::cli {
namespace {

namespace sel = ::ctxsel::selector;
using nlohmann::json;

// Thrown by the readers below and turned into a Status by ReadEvalContext;
// it never leaves this file.
struct FieldError {
  std::string message;
};

void Check(const absl::Status& status) {
  if (!status.ok()) throw FieldError{std::string(status.message())};
}

void RequireObject(const json& j, absl::string_view path) {
  if (!j.is_object())
    throw FieldError{absl::StrCat(path, " must be an object")};
}

sel::NameSet Names(const json& j, const std::string& path) {
  const bool strings =
      j.is_array() && std::all_of(j.begin(), j.end(), [](const json& name) {
        return name.is_string();
      });
  if (!strings) throw FieldError{path + " must be an array of strings"};
  sel::NameSet out;
  for (const json& name : j) out.insert(name.get<std::string>());
  return out;
}

int64_t Int(const json& j, const std::string& path) {
  if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
  if (!j.is_number_integer()) throw FieldError{path + " must be an integer"};
  return j.get<int64_t>();
}

bool Bool(const json& j, const std::string& path) {
  if (!j.is_boolean()) throw FieldError{path + " must be a boolean"};
  return j.get<bool>();
}

// ["i", "j"] (step 1) or {"i": 2, "j": "n"} (a constant or a uniform
// variable's name).
absl::flat_hash_map<std::string, sel::LinearStep> Linear(
    const json& j, const std::string& path) {
  absl::flat_hash_map<std::string, sel::LinearStep> out;
  if (j.is_array()) {
    for (const std::string& name : Names(j, path)) out[name] = {};
    return out;
  }
  if (!j.is_object()) {
    throw FieldError{path +
                     " must be an array of strings or an object of steps"};
  }
  for (const auto& [var, step] : j.items()) {
    std::string field = absl::StrCat(path, ".", var);
    if (step.is_string()) {
      out[var].uniform = step.get<std::string>();
      if (out[var].uniform.empty()) throw FieldError{field + " is empty"};
    } else if (step.is_number_integer()) {
      out[var].constant = step.get<int64_t>();
    } else {
      throw FieldError{field +
                       " must be an integer or a uniform variable's name"};
    }
  }
  return out;
}

sel::ConstructTrait Construct(const json& j, const std::string& path) {
  sel::ConstructTrait c;
  if (j.is_string()) {
    c.name = j.get<std::string>();
    return c;
  }
  Check(CheckFields(j, path,
                    {"name", "simdlen", "aligned", "linear", "uniform",
                     "inbranch", "notinbranch"}));
  if (!j.contains("name") || !j["name"].is_string()) {
    throw FieldError{path + ".name must be a string"};
  }
  c.name = j["name"].get<std::string>();
  if (j.contains("simdlen")) c.simdlen = Int(j["simdlen"], path + ".simdlen");
  if (j.contains("aligned")) {
    RequireObject(j["aligned"], path + ".aligned");
    for (const auto& [var, n] : j["aligned"].items())
      c.aligned[var] = Int(n, absl::StrCat(path, ".aligned.", var));
  }
  if (j.contains("linear")) c.linear = Linear(j["linear"], path + ".linear");
  if (j.contains("uniform")) c.uniform = Names(j["uniform"], path + ".uniform");
  if (j.contains("inbranch"))
    c.inbranch = Bool(j["inbranch"], path + ".inbranch");
  if (j.contains("notinbranch"))
    c.notinbranch = Bool(j["notinbranch"], path + ".notinbranch");
  return c;
}

sel::DeviceTraits Device(const json& j, const std::string& path) {
  static const auto* const kTraitNames = [] {
    auto* names = new std::vector<absl::string_view>;
    for (const sel::DeviceTraitField& field : sel::kDeviceTraitFields) {
      names->push_back(field.name);
    }
    return names;
  }();
  Check(CheckFields(j, path, *kTraitNames));
  sel::DeviceTraits d;
  for (const sel::DeviceTraitField& field : sel::kDeviceTraitFields) {
    const std::string key(field.name);
    if (j.contains(key))
      d.*field.member = Names(j[key], absl::StrCat(path, ".", key));
  }
  return d;
}

sel::TargetDevices TargetDevices(const json& j, const std::string& path) {
  Check(CheckFields(j, path, {"default", "devices"}));
  sel::TargetDevices t;
  if (j.contains("default"))
    t.default_device = Int(j["default"], path + ".default");
  if (!j.contains("devices")) return t;
  const std::string devices = path + ".devices";
  RequireObject(j["devices"], devices);
  for (const auto& [key, device] : j["devices"].items()) {
    int64_t number = 0;
    if (!absl::SimpleAtoi(key, &number)) {
      throw FieldError{absl::StrCat(devices, ": device number '", key,
                                    "' is not an integer")};
    }
    t.devices[number] = Device(device, absl::StrCat(devices, ".", key));
  }
  return t;
}

sel::ImplementationTraits Implementation(const json& j,
                                         const std::string& path) {
  Check(CheckFields(
      j, path,
      {"vendor", "extension", "requires", "atomic_default_mem_order"}));
  sel::ImplementationTraits impl;
  for (auto [field, names] : {std::make_pair("vendor", &impl.vendor),
                              std::make_pair("extension", &impl.extension),
                              std::make_pair("requires", &impl.requires_)}) {
    if (j.contains(field))
      *names = Names(j[field], absl::StrCat(path, ".", field));
  }
  if (j.contains("atomic_default_mem_order")) {
    const json& order = j["atomic_default_mem_order"];
    if (!order.is_string()) {
      throw FieldError{path + ".atomic_default_mem_order must be a string"};
    }
    impl.atomic_default_mem_order = order.get<std::string>();
  }
  return impl;
}

sel::Context Context(const json& j) {
  const std::string path = "context";
  Check(CheckFields(j, path,
                    {"construct", "device", "target_devices", "implementation",
                     "variables"}));
  sel::Context ctx;
  if (j.contains("construct")) {
    const json& list = j["construct"];
    if (!list.is_array())
      throw FieldError{path + ".construct must be an array"};
    for (size_t i = 0; i < list.size(); ++i) {
      ctx.construct.push_back(
          Construct(list[i], absl::StrCat(path, ".construct[", i, "]")));
    }
  }
  if (j.contains("device")) ctx.device = Device(j["device"], path + ".device");
  if (j.contains("target_devices")) {
    ctx.target_devices =
        TargetDevices(j["target_devices"], path + ".target_devices");
  }
  if (j.contains("implementation")) {
    ctx.implementation =
        Implementation(j["implementation"], path + ".implementation");
  }
  if (j.contains("variables")) {
    RequireObject(j["variables"], path + ".variables");
    for (const auto& [name, value] : j["variables"].items()) {
      ctx.variables[name] = Int(value, absl::StrCat(path, ".variables.", name));
    }
  }
  return ctx;
}

}  // namespace

absl::Status CheckFields(const json& j, absl::string_view path,
                         absl::Span<const absl::string_view> allowed) {
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " must be an object"));
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown field '", key, "' in ", path));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<sel::Context> ReadEvalContext(const json& context) {
  if (context.is_null()) return sel::Context();
  try {
    return Context(context);
  } catch (const FieldError& e) {
    return absl::InvalidArgumentError(e.message);
  }
}

}  // namespace ctxsel::cli
