// arena_messages.h: a gRPC MessageAllocator that places a unary call's
// request and response on a protobuf Arena, kept and reused from call to
// call. Without it every nested message and string of an answer is a
// malloc and a free: a SelectResponse (a choice, its alternatives and
// ranks, each with a device and its traits) is about 150 of each, about
// as many instructions as deciding it (docs/architecture.md, "The path of
// a Select"). With it a call's messages are carved from one block that the
// next call reuses, and destroying them is resetting the arena. The
// allocator must outlive the server: calls in flight return their arenas
// to it.
//
//   ArenaMessages<v1::SelectRequest, v1::SelectResponse> select_messages_;
//   ...
//   SetMessageAllocatorFor_Select(&select_messages_);
#ifndef CTXSEL_SERVER_RPC_ARENA_MESSAGES_H_
#define CTXSEL_SERVER_RPC_ARENA_MESSAGES_H_

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ctxsel::server {

template <typename Request, typename Response>
class ArenaMessages final : public grpc::MessageAllocator<Request, Response> {
 public:
  // Each arena starts with a block of `block_bytes` that it keeps (a call
  // that needs more mallocs the rest, freed when the call ends); at most
  // `kept` arenas wait for the next call, the others are freed.
  explicit ArenaMessages(size_t block_bytes = 16 << 10, size_t kept = 64)
      : block_bytes_(block_bytes), kept_(kept) {}
  ~ArenaMessages() override = default;

  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    std::unique_ptr<Holder> holder;
    {
      absl::MutexLock lock(&mu_);
      if (!idle_.empty()) {
        holder = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (holder == nullptr) holder = std::make_unique<Holder>(this);
    holder->Fill();
    return holder.release();
  }

 private:
  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    explicit Holder(ArenaMessages* owner)
        : owner_(owner),
          block_(new char[owner->block_bytes_]),
          arena_(Options(block_.get(), owner->block_bytes_)) {}

    void Fill() {
      this->set_request(
          google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(
          google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }

    // The call is over: its messages go with the arena's reset.
    void Release() override {
      arena_.Reset();
      owner_->Return(std::unique_ptr<Holder>(this));
    }

   private:
    static google::protobuf::ArenaOptions Options(char* block, size_t bytes) {
      google::protobuf::ArenaOptions options;
      options.initial_block = block;
      options.initial_block_size = bytes;
      return options;
    }

    ArenaMessages* const owner_;
    const std::unique_ptr<char[]> block_;  // before arena_, which uses it
    google::protobuf::Arena arena_;
  };

  // Keeps `holder` for the next call, or frees it (outside the lock).
  void Return(std::unique_ptr<Holder> holder) {
    absl::MutexLock lock(&mu_);
    if (idle_.size() < kept_) idle_.push_back(std::move(holder));
  }

  const size_t block_bytes_;
  const size_t kept_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Holder>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_ARENA_MESSAGES_H_
