#include "client/cli/variants_file.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"

namespace ctxsel::cli {
namespace {

using nlohmann::json;

absl::Status CheckKernel(const json& holder, const std::string& field,
                         const std::string& kernel) {
  if (!holder.contains("kernel")) return absl::OkStatus();
  const json& value = holder["kernel"];
  if (!value.is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not a string"));
  }
  if (value.get<std::string>() != kernel) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", value.get<std::string>(),
                     "' is not the kernel being registered ('", kernel, "')"));
  }
  return absl::OkStatus();
}

// Appends every element of item[field], which must be an array of strings.
absl::Status AddStrings(const json& item, const std::string& field,
                        const std::string& where,
                        google::protobuf::RepeatedPtrField<std::string>* out) {
  if (!item.contains(field)) return absl::OkStatus();
  const json& list = item[field];
  if (!list.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".", field, ": not an array of strings"));
  }
  for (const json& value : list) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".", field, ": not an array of strings"));
    }
    out->Add(value.get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<ctxsel::v1::Variant> ParseVariant(const json& item, size_t i,
                                                 const std::string& kernel) {
  const std::string where = absl::StrCat("variants[", i, "]");
  if (!item.is_object() || !item.value("name", json()).is_string() ||
      !item.value("selector", json()).is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": needs string fields \"name\" and \"selector\""));
  }
  CTXSEL_RETURN_IF_ERROR(CheckKernel(item, where + ".kernel", kernel));
  ctxsel::v1::Variant variant;
  variant.set_name(item["name"].get<std::string>());
  variant.set_selector(item["selector"].get<std::string>());
  ctxsel::v1::VariantMetadata* metadata = variant.mutable_metadata();
  for (const char* field : {"adjust_args", "append_args", "images"}) {
    auto* out =
        std::string(field) == "adjust_args"   ? metadata->mutable_adjust_args()
        : std::string(field) == "append_args" ? metadata->mutable_append_args()
                                              : metadata->mutable_images();
    CTXSEL_RETURN_IF_ERROR(AddStrings(item, field, where, out));
  }
  const json file = item.value("source_file", json(""));
  const json line = item.value("source_line", json(0));
  if (!file.is_string() || !line.is_number_integer()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": source_file must be a string and source_line an integer"));
  }
  metadata->set_source_file(file.get<std::string>());
  metadata->set_source_line(line.get<int>());
  return variant;
}

}  // namespace

absl::StatusOr<std::vector<ctxsel::v1::Variant>> ParseVariantsFile(
    const std::string& text, const std::string& kernel) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (doc.is_object()) {
    CTXSEL_RETURN_IF_ERROR(CheckKernel(doc, "kernel", kernel));
  }
  const json& list =
      doc.is_object() && doc.contains("variants") ? doc["variants"] : doc;
  if (!list.is_array()) {
    return absl::InvalidArgumentError("expected an array of variants");
  }
  // `import --from_binary` writes the binary's images once, at the top.
  ctxsel::v1::VariantMetadata top;
  if (doc.is_object()) {
    CTXSEL_RETURN_IF_ERROR(
        AddStrings(doc, "images", "the document", top.mutable_images()));
  }
  std::vector<ctxsel::v1::Variant> variants;
  for (size_t i = 0; i < list.size(); ++i) {
    CTXSEL_ASSIGN_OR_RETURN(ctxsel::v1::Variant variant,
                            ParseVariant(list[i], i, kernel));
    if (variant.metadata().images().empty()) {
      *variant.mutable_metadata()->mutable_images() = top.images();
    }
    variants.push_back(std::move(variant));
  }
  return variants;
}

}  // namespace ctxsel::cli
