// Many gRPC streams held open against a server, as an attacker without
// credentials would hold them: for availability tests (tests/security/).
// Each connection is a channel of its own (its own subchannel pool), and
// each stream a generic call that either sends nothing and waits (the
// server waits for a request that never comes, or for a stream message) or
// sends one empty request, half-closes and reads forever (health Watch).
//
//   HeldStreams held(address, credentials, /*connections=*/10,
//                    /*streams_per_connection=*/100,
//                    {HeldStreams::Silent("/ctxsel.v1.Placement/Select"),
//                     HeldStreams::EmptyRequest("/grpc.health.v1.Health/Watch")});
//   ... measure the server meanwhile ...
//   held.open();  // how many the server has not ended
#ifndef CTXSEL_TESTS_TESTING_HELD_STREAMS_H_
#define CTXSEL_TESTS_TESTING_HELD_STREAMS_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ctxsel::testing {

class HeldStreams {
 public:
  // What one stream calls and how.
  struct Method {
    std::string path;  // "/package.Service/Method"
    bool empty_request = false;
  };
  static Method Silent(std::string path) { return {std::move(path), false}; }
  static Method EmptyRequest(std::string path) {
    return {std::move(path), true};
  }

  // Opens `connections` x `streams_per_connection` streams, cycling through
  // `methods`, and returns once each has started (bounded: 30 s).
  HeldStreams(const std::string& address,
              std::shared_ptr<grpc::ChannelCredentials> credentials,
              int connections, int streams_per_connection,
              std::vector<Method> methods);
  // Cancels every stream and waits (bounded) for them to end.
  ~HeldStreams();
  HeldStreams(const HeldStreams&) = delete;
  HeldStreams& operator=(const HeldStreams&) = delete;

  int total() const { return static_cast<int>(streams_.size()); }
  // Streams the server has not ended.
  int open() const;
  // Streams that received at least one message.
  int answered() const;
  // How the streams the server ended ended, by status code.
  std::map<grpc::StatusCode, int> ended_by_code() const;

 private:
  enum class Step { kStart, kWrite, kWritesDone, kRead, kFinish };
  struct Stream;
  struct Tag {
    Stream* stream;
    Step step;
  };
  struct Stream {
    Method method;
    grpc::ClientContext context;
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call;
    grpc::ByteBuffer message;
    grpc::Status status;
    bool answered = false;
    Tag tags[5];
  };

  bool AllStarted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return started_ >= static_cast<int>(streams_.size());
  }
  bool AllEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ended_ >= static_cast<int>(streams_.size());
  }
  void Poll();
  void Advance(Stream& stream, Step step, bool ok);

  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<Stream>> streams_;
  grpc::CompletionQueue cq_;
  mutable absl::Mutex mu_;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
  int answered_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<grpc::StatusCode, int> ended_by_code_ ABSL_GUARDED_BY(mu_);
  std::thread poller_;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_HELD_STREAMS_H_
