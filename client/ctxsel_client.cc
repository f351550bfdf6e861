#include "client/ctxsel_client.h"

namespace ctxsel::client {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  // gRPC and Abseil share the canonical code numbering.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

CtxselClient::CtxselClient(std::shared_ptr<grpc::Channel> channel,
                           std::chrono::milliseconds timeout)
    : channel_(std::move(channel)),
      ctxsel_(ctxsel::v1::Ctxsel::NewStub(channel_)),
      timeout_(timeout) {}

std::unique_ptr<CtxselClient> CtxselClient::Connect(
    const std::string& address) {
  return std::make_unique<CtxselClient>(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

std::unique_ptr<grpc::ClientContext> CtxselClient::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout_);
  return context;
}

absl::StatusOr<std::string> CtxselClient::Ping() {
  ctxsel::v1::PingRequest request;
  ctxsel::v1::PingResponse response;
  auto context = NewContext();
  grpc::Status status = ctxsel_->Ping(context.get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.server_version();
}

}  // namespace ctxsel::client
