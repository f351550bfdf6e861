#include "server/rpc/reflection_service.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {
namespace {

namespace protobuf = ::google::protobuf;
using Request = reflection::ServerReflectionRequest;
using Response = reflection::ServerReflectionResponse;

void SetError(grpc::StatusCode code, std::string message, Response* response) {
  response->mutable_error_response()->set_error_code(code);
  response->mutable_error_response()->set_error_message(std::move(message));
}

// `file` and, after it, each file it imports that `sent` does not hold yet.
void AddFile(const protobuf::FileDescriptor* file, std::set<std::string>* sent,
             Response* response) {
  if (!sent->insert(file->name()).second) return;
  protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(response->mutable_file_descriptor_response()
                              ->add_file_descriptor_proto());
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFile(file->dependency(i), sent, response);
  }
}

void AnswerFile(const protobuf::FileDescriptor* file, absl::string_view what,
                Response* response) {
  if (file == nullptr) {
    SetError(grpc::StatusCode::NOT_FOUND, absl::StrCat(what, ": not found"),
             response);
    return;
  }
  std::set<std::string> sent;
  AddFile(file, &sent, response);
}

// One stream: a request read, answered, the next read; ended when the
// client half-closes or its credential is revoked. Deletes itself when
// done.
class ReflectionReactor final
    : public grpc::ServerBidiReactor<Request, Response> {
 public:
  ReflectionReactor(std::shared_ptr<ReactorLink<ReflectionReactor>> link,
                    const std::vector<std::string>* services,
                    Authorizer::StreamGrant grant)
      : link_(std::move(link)), services_(services), grant_(std::move(grant)) {
    absl::MutexLock lock(&link_->mu);
    link_->reactor = this;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    absl::MutexLock lock(&link_->mu);
    if (finished_) return;
    if (!ok) {  // the client half-closed or went away
      FinishOnce(grpc::Status::OK);
      return;
    }
    response_ = ReflectionAnswer(request_, *services_);
    write_in_flight_ = true;
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&link_->mu);
    write_in_flight_ = false;
    if (finished_) return;
    if (revoked_ || !ok) {
      FinishOnce(revoked_ ? RevokedStatus() : grpc::Status::OK);
      return;
    }
    StartRead(&request_);
  }
  void OnDone() override {
    {
      absl::MutexLock lock(&link_->mu);
      link_->reactor = nullptr;
    }
    delete this;
  }
  // With the link's lock held; a write in flight is let complete first.
  void Revoke() {
    revoked_ = true;
    if (!write_in_flight_) FinishOnce(RevokedStatus());
  }

 private:
  void FinishOnce(grpc::Status status) {
    if (finished_) return;
    finished_ = true;
    Finish(std::move(status));
  }

  const std::shared_ptr<ReactorLink<ReflectionReactor>> link_;
  const std::vector<std::string>* const services_;
  const Authorizer::StreamGrant grant_;
  // Guarded by link_->mu; one read or one write in flight at a time.
  Request request_;
  Response response_;
  bool write_in_flight_ = false;
  bool revoked_ = false;
  bool finished_ = false;
};

}  // namespace

Response ReflectionAnswer(const Request& request,
                          const std::vector<std::string>& services) {
  Response response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  const protobuf::DescriptorPool* pool =
      protobuf::DescriptorPool::generated_pool();
  switch (request.message_request_case()) {
    case Request::kListServices:
      for (const std::string& name : services) {
        response.mutable_list_services_response()->add_service()->set_name(
            name);
      }
      break;
    case Request::kFileByFilename:
      AnswerFile(pool->FindFileByName(request.file_by_filename()),
                 absl::StrCat("file '", request.file_by_filename(), "'"),
                 &response);
      break;
    case Request::kFileContainingSymbol:
      AnswerFile(
          pool->FindFileContainingSymbol(request.file_containing_symbol()),
          absl::StrCat("symbol '", request.file_containing_symbol(), "'"),
          &response);
      break;
    case Request::kFileContainingExtension: {
      const reflection::ExtensionRequest& wanted =
          request.file_containing_extension();
      const protobuf::Descriptor* type =
          pool->FindMessageTypeByName(wanted.containing_type());
      const protobuf::FieldDescriptor* extension =
          type == nullptr
              ? nullptr
              : pool->FindExtensionByNumber(type, wanted.extension_number());
      AnswerFile(extension == nullptr ? nullptr : extension->file(),
                 absl::StrCat("extension ", wanted.extension_number(), " of '",
                              wanted.containing_type(), "'"),
                 &response);
      break;
    }
    case Request::kAllExtensionNumbersOfType: {
      const protobuf::Descriptor* type =
          pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (type == nullptr) {
        SetError(grpc::StatusCode::NOT_FOUND,
                 absl::StrCat("type '", request.all_extension_numbers_of_type(),
                              "': not found"),
                 &response);
        break;
      }
      std::vector<const protobuf::FieldDescriptor*> extensions;
      pool->FindAllExtensions(type, &extensions);
      reflection::ExtensionNumberResponse* numbers =
          response.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const protobuf::FieldDescriptor* extension : extensions) {
        numbers->add_extension_number(extension->number());
      }
      break;
    }
    default:
      SetError(grpc::StatusCode::UNIMPLEMENTED,
               "the request is of no kind this server knows", &response);
  }
  return response;
}

grpc::ServerBidiReactor<Request, Response>*
ReflectionService::ServerReflectionInfo(grpc::CallbackServerContext* context) {
  auto link = std::make_shared<ReactorLink<ReflectionReactor>>();
  absl::StatusOr<Authorizer::StreamGrant> grant = authorizer_->AuthorizeStream(
      *context, "ServerReflection/ServerReflectionInfo", RevokeThrough(link));
  if (!grant.ok()) {
    return new Refused<grpc::ServerBidiReactor<Request, Response>>(
        ToGrpcStatus(grant.status()));
  }
  return new ReflectionReactor(std::move(link), &services_, *std::move(grant));
}

}  // namespace ctxsel::server
