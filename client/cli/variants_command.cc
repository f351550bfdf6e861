// ctxsel-cli variants register|ls|get|rm: the variant registry.
//
//   ctxsel-cli variants register saxpy 'saxpy_nv=device={arch(nvptx)}'
//   ctxsel-cli variants register saxpy --variants_file=saxpy.json --replace
//   ctxsel-cli variants register --from_source saxpy.c gemm.f90
//   ctxsel-cli variants register --from_source --keep_going src/*.c
//   ctxsel-cli variants register --from_source saxpy.c --from_binary=./app
//   ctxsel-cli variants ls [KERNEL]
//   ctxsel-cli variants get KERNEL NAME
//   ctxsel-cli variants rm KERNEL NAME
//   ctxsel-cli variants rm KERNEL --all_variants   (one atomic change)
//
// --variants_file: see variants_file.h (an eval document works as it is).
// --from_source reads `declare variant` and `begin/end declare variant`
// directives through the pragma importer (selector/pragma/importer.h, flags
// in source_import.h) and registers each base function's variants as one
// atomic batch (effective, canonical selectors), in declaration order. Any
// error stops the whole command before anything is sent, unless
// --keep_going: then every kernel whose directives are all valid is
// registered, the others are reported with file:line:column, and the exit
// code is 2 if anything was skipped.
#include <cstdio>
#include <map>
#include <set>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/input_file.h"
#include "client/cli/service_output.h"
#include "client/cli/source_import.h"
#include "client/cli/variants_file.h"
#include "selector/pragma/importer.h"

ABSL_FLAG(std::string, variants_file, "",
          "variants register: JSON file with the variants to register.");
ABSL_FLAG(bool, from_source, false,
          "variants register: the arguments are C/C++/Fortran sources whose "
          "declare variant directives are registered.");
ABSL_FLAG(bool, keep_going, false,
          "variants register --from_source: register every kernel whose "
          "directives are all valid, report the others, exit 2 if any was "
          "skipped.");
ABSL_FLAG(bool, replace, false,
          "variants register: replace all of the kernel's variants.");
ABSL_FLAG(int64_t, expected_revision, 0,
          "variants register: store only if the kernel is still at this "
          "revision (the one a previous register or rm printed); else "
          "ABORTED. 0: no check.");
ABSL_FLAG(bool, all_variants, false,
          "variants rm KERNEL: remove every variant of the kernel at once.");

namespace ctxsel::cli {
namespace {

absl::StatusOr<std::vector<v1::Variant>> ReadVariantsFile(
    const std::string& path, const std::string& kernel) {
  CTXSEL_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
  auto variants = ParseVariantsFile(text, kernel);
  if (!variants.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", variants.status().message()));
  }
  return variants;
}

void PrintRegistered(const std::string& kernel,
                     const v1::RegisterVariantsResponse& response) {
  std::printf("registered %d variant(s) of %s at revision %lld\n",
              response.registered_count(), kernel.c_str(),
              static_cast<long long>(response.revision()));
}

// Every variant of the batch records the binary's images (instead of any
// a variants file gave).
void AddImages(const std::vector<std::string>& ids,
               v1::RegisterVariantsRequest& request) {
  if (ids.empty()) return;
  for (v1::Variant& v : *request.mutable_variants()) {
    v.mutable_metadata()->mutable_images()->Assign(ids.begin(), ids.end());
  }
}

int RegisterFromSources(const std::vector<std::string>& files,
                        const std::vector<std::string>& images) {
  const bool keep_going = absl::GetFlag(FLAGS_keep_going);
  auto imported = ImportSources(files);
  if (!imported.ok()) {
    return ReportError("variants register", imported.status());
  }
  if (!imported->errors.empty() && !keep_going) {
    return ReportError(
        "variants register",
        absl::InvalidArgumentError(absl::StrCat(
            absl::StrJoin(imported->errors, "\n"),
            "\nnothing registered (--keep_going registers the valid "
            "kernels)")));
  }
  for (const std::string& e : imported->errors) {
    std::fprintf(stderr, "%s\n", e.c_str());
  }
  if (imported->batches.empty() && imported->errors.empty()) {
    return ReportError(
        "variants register",
        absl::InvalidArgumentError("no declare variant directives found"));
  }
  std::unique_ptr<client::CtxselClient> client =
      imported->batches.empty() ? nullptr : ConnectToServer();
  for (auto& [kernel, variants] : imported->batches) {
    v1::RegisterVariantsRequest request;
    request.set_kernel(kernel);
    request.set_replace(absl::GetFlag(FLAGS_replace));
    for (v1::Variant& v : variants) *request.add_variants() = std::move(v);
    AddImages(images, request);
    auto response = client->RegisterVariants(request);
    if (!response.ok()) {
      return ReportError("variants register " + kernel, response.status());
    }
    PrintRegistered(kernel, *response);
  }
  for (const std::string& kernel : imported->skipped) {
    std::fprintf(stderr, "skipped %s: its directives have errors\n",
                 kernel.c_str());
  }
  if (!imported->errors.empty()) {
    std::fprintf(stderr,
                 "variants register: %zu error(s), %zu kernel(s) "
                 "skipped\n",
                 imported->errors.size(), imported->skipped.size());
    return kExitBadInput;
  }
  return kExitOk;
}

void PrintVariants(const std::vector<v1::Variant>& variants) {
  v1::ListVariantsResponse all;
  Listing listing;
  listing.columns = {
      {"KERNEL"}, {"VARIANT"}, {"ORDER"}, {"REVISION"}, {"SELECTOR"}};
  for (const v1::Variant& v : variants) {
    *all.add_variants() = v;
    listing.rows.push_back({v.kernel(), v.name(), std::to_string(v.order()),
                            std::to_string(v.revision()), v.selector()});
    listing.names.push_back(absl::StrCat(v.kernel(), "/", v.name()));
  }
  PrintListing(all, listing);
}

int Register(const std::vector<std::string>& args) {
  absl::StatusOr<std::vector<std::string>> images = FromBinaryImages();
  if (!images.ok()) return ReportError("variants register", images.status());
  if (absl::GetFlag(FLAGS_from_source)) {
    if (args.empty()) {
      return BadUsage("variants register", "--from_source needs FILE...");
    }
    return RegisterFromSources(args, *images);
  }
  if (args.empty()) return UsageError(kVariantsCommand);
  v1::RegisterVariantsRequest request;
  request.set_kernel(args[0]);
  request.set_replace(absl::GetFlag(FLAGS_replace));
  request.set_expected_revision(absl::GetFlag(FLAGS_expected_revision));
  if (const std::string file = absl::GetFlag(FLAGS_variants_file);
      !file.empty()) {
    auto variants = ReadVariantsFile(file, args[0]);
    if (!variants.ok())
      return ReportError("variants register", variants.status());
    for (v1::Variant& v : *variants) *request.add_variants() = std::move(v);
  }
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t eq = args[i].find('=');
    if (eq == std::string::npos) {
      return BadUsage("variants register",
                      absl::StrCat("'", args[i], "' is not NAME=SELECTOR"));
    }
    v1::Variant* v = request.add_variants();
    v->set_name(args[i].substr(0, eq));
    v->set_selector(args[i].substr(eq + 1));
  }
  AddImages(*images, request);
  auto response = ConnectToServer()->RegisterVariants(request);
  if (!response.ok())
    return ReportError("variants register", response.status());
  if (!PrintMessage(*response)) {
    PrintRegistered(request.kernel(), *response);
  }
  return kExitOk;
}

int List(const std::vector<std::string>& args) {
  auto variants = ConnectToServer()->ListVariants(args.empty() ? "" : args[0]);
  if (!variants.ok()) return ReportError("variants ls", variants.status());
  PrintVariants(*variants);
  return kExitOk;
}

int Get(const std::vector<std::string>& args) {
  if (args.size() != 2) return UsageError(kVariantsCommand);
  auto variant = ConnectToServer()->GetVariant(args[0], args[1]);
  if (!variant.ok()) return ReportError("variants get", variant.status());
  if (PrintMessage(*variant)) return kExitOk;
  const v1::VariantMetadata& m = variant->metadata();
  const std::string source =
      m.source_file().empty()
          ? "-"
          : absl::StrCat(m.source_file(), ":", m.source_line());
  std::printf(
      "kernel:      %s\nvariant:     %s\nselector:    %s\ncanonical:   %s\n"
      "order:       %lld\nrevision:    %lld\nadjust_args: %s\n"
      "append_args: %s\nsource:      %s\nimages:      %s\n",
      variant->kernel().c_str(), variant->name().c_str(),
      variant->selector().c_str(), variant->canonical_selector().c_str(),
      static_cast<long long>(variant->order()),
      static_cast<long long>(variant->revision()),
      JoinList(m.adjust_args()).c_str(), JoinList(m.append_args()).c_str(),
      source.c_str(), JoinList(m.images()).c_str());
  return kExitOk;
}

int Remove(const std::vector<std::string>& args) {
  if (absl::GetFlag(FLAGS_all_variants)) {
    if (args.size() != 1) return UsageError(kVariantsCommand);
    auto revision = ConnectToServer()->DeleteAllVariants(args[0]);
    if (!revision.ok()) return ReportError("variants rm", revision.status());
    std::printf("deleted every variant of %s (revision %lld)\n",
                args[0].c_str(), static_cast<long long>(*revision));
    return kExitOk;
  }
  if (args.size() != 2) return UsageError(kVariantsCommand);
  auto revision = ConnectToServer()->DeleteVariant(args[0], args[1]);
  if (!revision.ok()) return ReportError("variants rm", revision.status());
  std::printf("deleted %s/%s (revision %lld)\n", args[0].c_str(),
              args[1].c_str(), static_cast<long long>(*revision));
  return kExitOk;
}

int RunVariants(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest =
      args.empty() ? args
                   : std::vector<std::string>(args.begin() + 1, args.end());
  if (sub == "register" || sub == "add") return Register(rest);
  if (sub == "ls" || sub == "list") return List(rest);
  if (sub == "get") return Get(rest);
  if (sub == "rm" || sub == "delete") return Remove(rest);
  return UsageError(kVariantsCommand);
}

}  // namespace

const Command kVariantsCommand = {
    "variants",
    "variants register KERNEL [NAME=SELECTOR...] [--variants_file=FILE] "
    "[--replace] [--expected_revision=N] [--from_binary=APP] [--json]\n"
    "variants register --from_source [--replace] [--keep_going] "
    "[--from_binary=APP] "
    "[--define=NAME[=VALUE],...] [--undefine=NAME,...] "
    "[--fortran_form=auto|fixed|free] FILE...\n"
    "variants ls [KERNEL] [--json]\n"
    "variants get KERNEL NAME [--json]\n"
    "variants rm KERNEL NAME\n"
    "variants rm KERNEL --all_variants",
    "Manage the registered variants of kernels.", RunVariants};

}  // namespace ctxsel::cli
