// ctxsel-cli archs [--json] [NAME]: the SYCL device-architecture catalog.
// Without NAME lists every architecture; with NAME (canonical name, alias or
// __SYCL_TARGET_*__ macro) shows that one, or exits 2 listing the nearest
// valid names.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/json_output.h"
#include "client/cli/service_output.h"
#include "nlohmann/json.hpp"
#include "selector/device_traits.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::cli {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const std::vector<absl::string_view>& in) {
  return {in.begin(), in.end()};
}

std::vector<std::string> Sorted(const selector::NameSet& set) {
  std::vector<std::string> out(set.begin(), set.end());
  std::sort(out.begin(), out.end());
  return out;
}

json ArchJson(const sycl::ArchInfo& arch) {
  json out = {{"name", std::string(arch.name)},
              {"aliases", Strings(arch.aliases)},
              {"macro", std::string(arch.macro)}};
  const sycl::ArchInfo& device = sycl::GetArch(arch.device);
  if (arch.device != arch.id) out["runs_on"] = std::string(device.name);
  absl::StatusOr<selector::DeviceTraits> t = sycl::DeviceTraitsFor(arch.name);
  if (t.ok()) {
    json traits = json::object();
    for (const selector::DeviceTraitField& field :
         selector::kDeviceTraitFields) {
      traits[std::string(field.name)] = Sorted((*t).*field.member);
    }
    out["traits"] = std::move(traits);
  }
  return out;
}

// One table row: the name, the macro, then the traits and aliases (the
// last column, wrapped to fit; text_fit.h).
std::vector<std::string> Row(const sycl::ArchInfo& arch) {
  absl::StatusOr<selector::DeviceTraits> t = sycl::DeviceTraitsFor(arch.name);
  return {std::string(arch.name), std::string(arch.macro),
          absl::StrCat("kind(", absl::StrJoin(Sorted(t->kind), ", "), ") arch(",
                       absl::StrJoin(Sorted(t->arch), ", "), ") isa(",
                       absl::StrJoin(Sorted(t->isa), ", "), ") vendor(",
                       absl::StrJoin(Sorted(t->vendor), ", "), ")",
                       arch.aliases.empty() ? "" : " alias ",
                       absl::StrJoin(arch.aliases, ", "))};
}

std::vector<std::vector<std::string>> Header() {
  return {{"ARCH", "MACRO", "TRAITS"}};
}

int RunArchs(const std::vector<std::string>& args) {
  const bool as_json = OutputFormatFromFlags().value_or(OutputFormat::kTable) ==
                           OutputFormat::kJson ||
                       OutputFormatFromFlags().value_or(OutputFormat::kTable) ==
                           OutputFormat::kYaml;
  if (args.size() > 1) return UsageError(kArchsCommand);
  if (args.size() == 1) {
    absl::StatusOr<const sycl::ArchInfo*> arch = sycl::LookupArch(args[0]);
    if (!arch.ok()) {
      std::fprintf(stderr, "archs: %s\n",
                   std::string(arch.status().message()).c_str());
      return kExitBadInput;
    }
    if (!PrintJsonDocument(ArchJson(**arch))) {
      std::vector<std::vector<std::string>> rows = Header();
      rows.push_back(Row(**arch));
      PrintTable(rows);
    }
    return kExitOk;
  }
  json all = json::array();
  std::vector<std::vector<std::string>> rows = Header();
  for (const sycl::ArchInfo& arch : sycl::AllArchs()) {
    if (as_json) {
      all.push_back(ArchJson(arch));
    } else {
      rows.push_back(Row(arch));
    }
  }
  if (as_json) {
    PrintJsonDocument(all);
  } else {
    PrintTable(rows);
  }
  return kExitOk;
}

}  // namespace

const Command kArchsCommand = {
    "archs", "archs [--json] [NAME]",
    "The SYCL device-architecture catalog, or one architecture.", RunArchs};

}  // namespace ctxsel::cli
