#include "base/status_details.h"

#include <map>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/any.pb.h"

namespace ctxsel {
namespace {

constexpr absl::string_view kTypeUrlPrefix = "type.googleapis.com/";

template <typename T>
void SetDetail(absl::Status& status, const T& detail) {
  status.SetPayload(DetailTypeUrl(T::descriptor()->full_name()),
                    absl::Cord(detail.SerializeAsString()));
}

}  // namespace

std::string DetailTypeUrl(absl::string_view full_name) {
  return absl::StrCat(kTypeUrlPrefix, full_name);
}

absl::Status FieldViolation(absl::string_view field,
                            absl::string_view description) {
  return WithFieldViolation(
      absl::InvalidArgumentError(absl::StrCat(field, ": ", description)), field,
      description);
}

absl::Status WithFieldViolation(absl::Status status, absl::string_view field,
                                absl::string_view description) {
  google::rpc::BadRequest bad =
      GetDetail<google::rpc::BadRequest>(status).value_or(
          google::rpc::BadRequest());
  google::rpc::BadRequest::FieldViolation* violation =
      bad.add_field_violations();
  violation->set_field(std::string(field));
  violation->set_description(std::string(description));
  SetDetail(status, bad);
  if (!GetDetail<google::rpc::ErrorInfo>(status).has_value()) {
    return WithErrorInfo(std::move(status), kReasonFieldInvalid);
  }
  return status;
}

absl::Status RebaseFieldViolations(absl::Status status, absl::string_view from,
                                   absl::string_view to) {
  std::optional<google::rpc::BadRequest> bad =
      GetDetail<google::rpc::BadRequest>(status);
  if (!bad.has_value()) return status;
  for (auto& violation : *bad->mutable_field_violations()) {
    if (!absl::StartsWith(violation.field(), from)) continue;
    violation.set_field(
        absl::StrCat(to, violation.field().substr(from.size())));
  }
  SetDetail(status, *bad);
  return status;
}

absl::Status WithMessage(const absl::Status& status,
                         absl::string_view message) {
  absl::Status out(status.code(), message);
  status.ForEachPayload(
      [&out](absl::string_view type_url, const absl::Cord& payload) {
        out.SetPayload(type_url, payload);
      });
  return out;
}

absl::Status WithErrorInfo(
    absl::Status status, absl::string_view reason,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  google::rpc::ErrorInfo info =
      GetDetail<google::rpc::ErrorInfo>(status).value_or(
          google::rpc::ErrorInfo());
  info.set_reason(std::string(reason));
  info.set_domain(kErrorDomain);
  for (const auto& [key, value] : metadata) {
    (*info.mutable_metadata())[key] = value;
  }
  SetDetail(status, info);
  return status;
}

absl::Status WithResourceInfo(absl::Status status,
                              absl::string_view resource_type,
                              absl::string_view resource_name) {
  google::rpc::ResourceInfo info;
  info.set_resource_type(std::string(resource_type));
  info.set_resource_name(std::string(resource_name));
  SetDetail(status, info);
  return status;
}

google::rpc::Status ToRpcStatus(const absl::Status& status) {
  google::rpc::Status out;
  out.set_code(static_cast<int>(status.code()));
  out.set_message(std::string(status.message()));
  if (status.ok()) return out;
  absl::Status with_info = status;
  if (!GetDetail<google::rpc::ErrorInfo>(status).has_value()) {
    with_info = WithErrorInfo(status, absl::StatusCodeToString(status.code()));
  }
  with_info.ForEachPayload(
      [&out](absl::string_view type_url, const absl::Cord& payload) {
        if (!absl::StartsWith(type_url, kTypeUrlPrefix)) return;
        google::protobuf::Any* any = out.add_details();
        any->set_type_url(std::string(type_url));
        any->set_value(std::string(payload));
      });
  return out;
}

absl::Status FromRpcStatus(absl::StatusCode code, absl::string_view message,
                           absl::string_view details_bin) {
  absl::Status status(code, message);
  google::rpc::Status details;
  if (status.ok() || details_bin.empty() ||
      !details.ParseFromArray(details_bin.data(),
                              static_cast<int>(details_bin.size()))) {
    return status;
  }
  for (const google::protobuf::Any& any : details.details()) {
    status.SetPayload(any.type_url(), absl::Cord(any.value()));
  }
  return status;
}

std::string DescribeDetails(const absl::Status& status) {
  std::string out;
  if (auto bad = GetDetail<google::rpc::BadRequest>(status)) {
    for (const auto& violation : bad->field_violations()) {
      absl::StrAppend(&out, "  field ", violation.field(), ": ",
                      violation.description(), "\n");
    }
  }
  if (auto info = GetDetail<google::rpc::ErrorInfo>(status)) {
    absl::StrAppend(&out, "  reason ", info->reason());
    // Sorted, so the line reads the same every time.
    std::map<std::string, std::string> sorted(info->metadata().begin(),
                                              info->metadata().end());
    for (const auto& [key, value] : sorted) {
      absl::StrAppend(&out, " ", key, "=", value);
    }
    absl::StrAppend(&out, "\n");
  }
  if (auto resource = GetDetail<google::rpc::ResourceInfo>(status)) {
    absl::StrAppend(&out, "  resource ", resource->resource_type(), " ",
                    resource->resource_name(), "\n");
  }
  return out;
}

}  // namespace ctxsel
