#include "server/registry/kernel_variants.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "images/device_image.h"
#include "server/model/names.h"

namespace ctxsel::server {

absl::Status CheckKernelVariants(const std::string& kernel,
                                 absl::Span<const Variant> kept,
                                 absl::Span<const Variant> added) {
  CTXSEL_RETURN_IF_ERROR(ValidateName(kernel, "kernel"));
  if (kept.size() + added.size() > kMaxVariantsPerKernel) {
    const std::string message = absl::StrCat(
        "kernel ", kernel, " would have ", kept.size() + added.size(),
        " variants; at most ", kMaxVariantsPerKernel);
    return WithErrorInfo(WithFieldViolation(absl::InvalidArgumentError(message),
                                            "variants", message),
                         kReasonTooManyVariants, {{"kernel", kernel}});
  }
  absl::flat_hash_set<absl::string_view> taken;
  for (const Variant& v : kept) taken.insert(v.name);
  absl::flat_hash_set<absl::string_view> in_batch;
  for (size_t i = 0; i < added.size(); ++i) {
    const Variant& v = added[i];
    const std::string field = absl::StrCat("variants[", i, "]");
    const std::string where = absl::StrCat(field, " (", v.name, ")");
    if (v.kernel != kernel) {
      return WithFieldViolation(
          absl::InvalidArgumentError(absl::StrCat(where, ".kernel: '", v.kernel,
                                                  "' is not '", kernel, "'")),
          field + ".kernel", "another kernel");
    }
    if (!in_batch.insert(v.name).second) {
      return WithFieldViolation(
          absl::InvalidArgumentError(where + ".name: repeated in the batch"),
          field + ".name", "repeated in the batch");
    }
    if (v.metadata.images.size() > kMaxImages) {
      return WithFieldViolation(
          absl::InvalidArgumentError(absl::StrCat(
              where, ".metadata.images: ", v.metadata.images.size(),
              " images; at most ", kMaxImages)),
          field + ".metadata.images", "too many");
    }
    for (size_t j = 0; j < v.metadata.images.size(); ++j) {
      if (absl::StatusOr<images::DeviceImage> image =
              images::ParseImageId(v.metadata.images[j]);
          !image.ok()) {
        return WithFieldViolation(
            absl::InvalidArgumentError(
                absl::StrCat(where, ".metadata.images[", j,
                             "]: ", image.status().message())),
            absl::StrCat(field, ".metadata.images[", j, "]"),
            image.status().message());
      }
    }
    if (taken.contains(v.name)) {
      return WithResourceInfo(
          WithErrorInfo(absl::AlreadyExistsError(absl::StrCat(
                            where, ".name: kernel ", kernel,
                            " already has a variant of that name")),
                        kReasonVariantExists,
                        {{"kernel", kernel}, {"name", v.name}}),
          "ctxsel.v1.Variant", absl::StrCat(kernel, "/", v.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
