#include "server/rpc/variants_service.h"

#include "base/status_details.h"
#include "server/model/log_text.h"
#include "server/model/page_budget.h"
#include "server/rpc/call_interrupt.h"
#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {

grpc::ServerUnaryReactor* VariantsService::RegisterVariants(
    grpc::CallbackServerContext* context,
    const v1::RegisterVariantsRequest* request,
    v1::RegisterVariantsResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Variants/RegisterVariants");
  if (!caller.ok()) return Answer(context, ToGrpcStatus(caller.status()));
  if (absl::Status s =
          authorizer_->limits().Take(Budget::kRegistration, caller->name);
      !s.ok()) {
    return Answer(context, ToGrpcStatus(s));
  }
  return AnswerOnWorker(*workers_, context, [this, request, response] {
    return DoRegister(*request, response);
  });
}

grpc::Status VariantsService::DoRegister(
    const v1::RegisterVariantsRequest& request,
    v1::RegisterVariantsResponse* response) {
  std::vector<VariantSpec> specs;
  specs.reserve(request.variants_size());
  for (const v1::Variant& variant : request.variants()) {
    specs.push_back(VariantSpecFromProto(variant));
  }
  absl::StatusOr<RegisterResult> result =
      registry_->Register(request.kernel(), std::move(specs), request.replace(),
                          request.expected_revision());
  if (!result.ok()) return ToGrpcStatus(result.status());
  // Counts, not the variants: echoing a batch near the message limit would
  // make a reply over it, failing a call whose batch was already stored.
  response->set_revision(result->revision);
  response->set_registered_count(static_cast<int32_t>(result->variants.size()));
  spdlog::info("variants: {} {} variant(s) of kernel {} (revision {})",
               request.replace() ? "replaced with" : "registered",
               result->variants.size(), LogSafe(request.kernel()),
               result->revision);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* VariantsService::ListVariants(
    grpc::CallbackServerContext* context,
    const v1::ListVariantsRequest* request,
    v1::ListVariantsResponse* response) {
  return Answer(context, DoList(*context, *request, response));
}

grpc::Status VariantsService::DoList(const grpc::ServerContextBase& context,
                                     const v1::ListVariantsRequest& request,
                                     v1::ListVariantsResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(context, "Variants/ListVariants");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  PageBudget<Variant> budget(page_bytes_, [](const Variant& variant) {
    v1::Variant out;
    VariantToProto(variant, &out);
    return RepeatedFieldBytes(out);
  });
  absl::StatusOr<VariantPage> page =
      registry_->List(request.kernel(), request.page_size(),
                      request.page_token(), std::move(budget));
  if (!page.ok()) return ToGrpcStatus(page.status());
  if (absl::Status s = CallInterrupted(context); !s.ok()) {
    return ToGrpcStatus(s);
  }
  for (const Variant& variant : page->variants) {
    VariantToProto(variant, response->add_variants());
  }
  response->set_next_page_token(page->next_page_token);
  response->set_revision(page->revision);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* VariantsService::GetVariant(
    grpc::CallbackServerContext* context, const v1::GetVariantRequest* request,
    v1::GetVariantResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Variants/GetVariant");
  if (!caller.ok()) return Answer(context, ToGrpcStatus(caller.status()));
  absl::StatusOr<Variant> variant =
      registry_->Get(request->kernel(), request->name());
  if (!variant.ok()) return Answer(context, ToGrpcStatus(variant.status()));
  VariantToProto(*variant, response->mutable_variant());
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* VariantsService::DeleteVariant(
    grpc::CallbackServerContext* context,
    const v1::DeleteVariantRequest* request,
    v1::DeleteVariantResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Variants/DeleteVariant");
  if (!caller.ok()) return Answer(context, ToGrpcStatus(caller.status()));
  if (request->all_variants() && !request->name().empty()) {
    return Answer(context, ToGrpcStatus(FieldViolation(
                               "name", "must be empty with all_variants")));
  }
  return AnswerOnWorker(*workers_, context, [this, request, response] {
    return DoDelete(*request, response);
  });
}

grpc::Status VariantsService::DoDelete(const v1::DeleteVariantRequest& request,
                                       v1::DeleteVariantResponse* response) {
  absl::StatusOr<int64_t> revision =
      request.all_variants()
          ? registry_->DeleteAllVariants(request.kernel())
          : registry_->Delete(request.kernel(), request.name());
  if (!revision.ok()) return ToGrpcStatus(revision.status());
  response->set_revision(*revision);
  spdlog::info(
      "variants: deleted {}/{} (revision {})", LogSafe(request.kernel()),
      request.all_variants() ? "*" : LogSafe(request.name()), *revision);
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
