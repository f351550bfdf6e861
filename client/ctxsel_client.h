// C++ client library for a ctxsel server.
//
//   auto client = ctxsel::client::CtxselClient::Connect("127.0.0.1:7070");
//   absl::StatusOr<std::string> version = client->Ping();
//
// Every call has a deadline (the constructor's `timeout`) and returns the
// server's error as an absl::Status with the same code and message.
#ifndef CTXSEL_CLIENT_CTXSEL_CLIENT_H_
#define CTXSEL_CLIENT_CTXSEL_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

namespace ctxsel::client {

// Converts a gRPC status into the equivalent absl::Status.
absl::Status FromGrpcStatus(const grpc::Status& status);

class CtxselClient {
 public:
  explicit CtxselClient(std::shared_ptr<grpc::Channel> channel,
                        std::chrono::milliseconds timeout =
                            std::chrono::milliseconds(5000));

  // An insecure channel to `address` (host:port).
  static std::unique_ptr<CtxselClient> Connect(const std::string& address);

  // Round-trips a no-op call; returns the server's version.
  absl::StatusOr<std::string> Ping();

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // A context whose deadline is now + timeout_.
  std::unique_ptr<grpc::ClientContext> NewContext() const;

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<ctxsel::v1::Ctxsel::Stub> ctxsel_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ctxsel::client

#endif  // CTXSEL_CLIENT_CTXSEL_CLIENT_H_
