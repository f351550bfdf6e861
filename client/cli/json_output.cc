#include "client/cli/json_output.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "client/cli/common_flags.h"

namespace ctxsel::cli {
namespace {

bool IsScalar(const nlohmann::ordered_json& json) {
  return !json.is_structured() || json.empty();
}

// A scalar, or an empty object or list, on one line; strings JSON-quoted,
// which YAML reads as double-quoted scalars.
std::string YamlScalar(const nlohmann::ordered_json& json) {
  if (json.is_object()) return "{}";
  if (json.is_array()) return "[]";
  return json.dump();
}

// `json` as YAML block lines at `indent`; `first_prefix` replaces the
// indentation of the first line ("- " for a list element).
void AppendYaml(const nlohmann::ordered_json& json, const std::string& indent,
                std::string first_prefix, std::string& out) {
  auto prefix = [&] {
    std::string p = first_prefix.empty() ? indent : first_prefix;
    first_prefix.clear();
    return p;
  };
  if (json.is_object()) {
    for (const auto& [key, value] : json.items()) {
      const std::string line = absl::StrCat(prefix(), key, ":");
      if (IsScalar(value)) {
        absl::StrAppend(&out, line, " ", YamlScalar(value), "\n");
      } else {
        absl::StrAppend(&out, line, "\n");
        AppendYaml(value, indent + "  ", "", out);
      }
    }
  } else if (json.is_array()) {
    for (const nlohmann::ordered_json& element : json) {
      if (IsScalar(element)) {
        absl::StrAppend(&out, prefix(), "- ", YamlScalar(element), "\n");
      } else {
        AppendYaml(element, indent + "  ", prefix() + "- ", out);
      }
    }
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::ordered_json& json) {
  if (IsScalar(json)) return YamlScalar(json) + "\n";
  std::string out;
  AppendYaml(json, "", "", out);
  return out;
}

bool PrintJsonDocument(const nlohmann::ordered_json& json) {
  switch (OutputFormatFromFlags().value_or(OutputFormat::kTable)) {
    case OutputFormat::kJson:
      std::printf("%s\n", json.dump(2).c_str());
      return true;
    case OutputFormat::kYaml:
      std::printf("%s", JsonToYaml(json).c_str());
      return true;
    default:
      return false;
  }
}

bool PrintJsonDocument(const nlohmann::json& json) {
  return PrintJsonDocument(nlohmann::ordered_json::parse(json.dump()));
}

}  // namespace ctxsel::cli
