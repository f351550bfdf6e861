#include "tests/testing/held_streams.h"

#include <utility>

#include "absl/time/time.h"

namespace ctxsel::testing {

HeldStreams::HeldStreams(const std::string& address,
                         std::shared_ptr<grpc::ChannelCredentials> credentials,
                         int connections, int streams_per_connection,
                         std::vector<Method> methods) {
  for (int c = 0; c < connections; ++c) {
    // Its own subchannel pool: one TCP connection per channel.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    channels_.push_back(
        grpc::CreateCustomChannel(address, credentials, std::move(args)));
  }
  poller_ = std::thread([this] { Poll(); });
  for (int c = 0; c < connections; ++c) {
    grpc::GenericStub stub(channels_[c]);
    for (int s = 0; s < streams_per_connection; ++s) {
      auto stream = std::make_unique<Stream>();
      stream->method = methods[streams_.size() % methods.size()];
      int i = 0;
      for (Step step : {Step::kStart, Step::kWrite, Step::kWritesDone,
                        Step::kRead, Step::kFinish}) {
        stream->tags[i++] = Tag{stream.get(), step};
      }
      stream->call =
          stub.PrepareCall(&stream->context, stream->method.path, &cq_);
      stream->call->StartCall(&stream->tags[0]);
      streams_.push_back(std::move(stream));
    }
  }
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(this, &HeldStreams::AllStarted),
                       absl::Seconds(30));
}

HeldStreams::~HeldStreams() {
  for (auto& stream : streams_) stream->context.TryCancel();
  {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &HeldStreams::AllEnded),
                         absl::Seconds(10));
  }
  cq_.Shutdown();
  poller_.join();
}

int HeldStreams::open() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(streams_.size()) - ended_;
}

int HeldStreams::answered() const {
  absl::MutexLock lock(&mu_);
  return answered_;
}

std::map<grpc::StatusCode, int> HeldStreams::ended_by_code() const {
  absl::MutexLock lock(&mu_);
  return ended_by_code_;
}

void HeldStreams::Poll() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) {
    Tag* t = static_cast<Tag*>(tag);
    Advance(*t->stream, t->step, ok);
  }
}

// One operation is in flight per stream at a time, so a stream's fields
// are only touched here, on the polling thread.
void HeldStreams::Advance(Stream& stream, Step step, bool ok) {
  Tag* tags = stream.tags;
  switch (step) {
    case Step::kStart: {
      absl::MutexLock lock(&mu_);
      ++started_;
      break;
    }
    case Step::kWrite:
      if (ok) {
        stream.call->WritesDone(&tags[2]);
        return;
      }
      break;
    case Step::kWritesDone:
      break;
    case Step::kRead:
      if (ok && !stream.answered) {
        stream.answered = true;
        absl::MutexLock lock(&mu_);
        ++answered_;
      }
      break;
    case Step::kFinish: {
      absl::MutexLock lock(&mu_);
      ++ended_;
      ++ended_by_code_[stream.status.error_code()];
      return;
    }
  }
  if (!ok) {
    stream.call->Finish(&stream.status, &tags[4]);
    return;
  }
  if (step == Step::kStart && stream.method.empty_request) {
    grpc::Slice empty;
    stream.call->Write(grpc::ByteBuffer(&empty, 1), &tags[1]);
    return;
  }
  stream.call->Read(&stream.message, &tags[3]);
}

}  // namespace ctxsel::testing
