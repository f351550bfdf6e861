#include "client/ctxsel_client.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/backoff.h"
#include "base/grpc_status.h"
#include "base/proto_time.h"
#include "base/server_target.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "client/inventory_watch.h"

namespace ctxsel::client {

namespace {

// An answer after which a call that is safe to repeat goes to the next
// replica: the replica could not be reached, or did not answer in time.
bool FailsOver(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// The deadline of an attempt with `replicas` (>= 1) still to try: an even
// share of what is left.
std::chrono::system_clock::time_point AttemptDeadline(
    std::chrono::system_clock::time_point deadline, size_t replicas) {
  const auto now = std::chrono::system_clock::now();
  if (deadline <= now) return deadline;
  return now + (deadline - now) / static_cast<int>(replicas);
}

}  // namespace

template <typename Response, typename Call>
absl::StatusOr<Response> CtxselClient::Unary(Call call, Resend resend) const {
  const Deadline deadline = std::chrono::system_clock::now() + timeout_;
  const size_t count = replicas_.size();
  const size_t first = current_;
  grpc::Status status;
  for (size_t tried = 0; tried < count; ++tried) {
    size_t index = (first + tried) % count;
    Deadline attempt = AttemptDeadline(deadline, count - tried);
    if (resend == Resend::kNever && count > 1) {
      absl::StatusOr<size_t> picked = PickForOnce(deadline);
      if (!picked.ok()) return picked.status();
      index = *picked;
      attempt = deadline;
    }
    grpc::ClientContext context;
    context.set_deadline(attempt);
    Response response;
    status = call(*replicas_[index], &context, &response);
    if (!FailsOver(status)) current_ = index;
    if (status.ok()) return response;
    if (!FailsOver(status) || resend == Resend::kNever) break;
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(absl::StrCat(
        "no answer within ", timeout_.count(), "ms",
        count > 1 ? absl::StrCat(" from ", count, " replicas") : "", " (",
        status.error_message(), ")"));
  }
  return FromGrpcStatus(status);
}

absl::StatusOr<size_t> CtxselClient::PickForOnce(Deadline deadline) const {
  const size_t count = replicas_.size();
  const size_t first = current_;
  grpc::Status status;
  for (size_t tried = 0; tried < count; ++tried) {
    const size_t index = (first + tried) % count;
    grpc::ClientContext context;
    context.set_deadline(AttemptDeadline(deadline, count - tried));
    v1::PingResponse pong;
    status = replicas_[index]->ctxsel->Ping(&context, v1::PingRequest(), &pong);
    // Any answer, a refusal too, shows the replica is there to answer.
    if (!FailsOver(status)) {
      current_ = index;
      return index;
    }
  }
  return absl::UnavailableError(absl::StrCat(
      "none of ", count, " replicas answered a ping within ", timeout_.count(),
      "ms (", status.error_message(), "); nothing was sent"));
}

// Calls `call(replica, context, request, &page)` until the server returns no
// next_page_token, appending `items(page)` each time; each page has its own
// deadline and failover.
template <typename Response, typename Item, typename Request, typename Call,
          typename Items>
absl::StatusOr<std::vector<Item>> CtxselClient::AllPages(Request request,
                                                         Call call,
                                                         Items items) const {
  std::vector<Item> out;
  do {
    auto page =
        Unary<Response>([&](const Replica& replica,
                            grpc::ClientContext* context, Response* response) {
          return call(replica, context, request, response);
        });
    if (!page.ok()) return page.status();
    out.insert(out.end(), items(*page).begin(), items(*page).end());
    request.set_page_token(page->next_page_token());
  } while (!request.page_token().empty());
  return out;
}

absl::StatusOr<v1::HeartbeatResponse> HeartbeatStream::Beat(
    const v1::HeartbeatRequest& beat) {
  v1::HeartbeatResponse response;
  if (closed_ || !stream_->Write(beat) || !stream_->Read(&response)) {
    absl::Status closed = Close();
    return closed.ok() ? absl::UnavailableError("heartbeat stream ended")
                       : closed;
  }
  return response;
}

absl::Status HeartbeatStream::Close() {
  if (closed_) return absl::FailedPreconditionError("stream already closed");
  closed_ = true;
  stream_->WritesDone();
  v1::HeartbeatResponse ignored;
  while (stream_->Read(&ignored)) {
  }
  return FromGrpcStatus(stream_->Finish());
}

HeartbeatStream::~HeartbeatStream() {
  if (!closed_) {
    context_.TryCancel();
    Close().IgnoreError();
  }
}

CtxselClient::Replica::Replica(std::shared_ptr<grpc::Channel> channel)
    : channel(std::move(channel)),
      ctxsel(v1::Ctxsel::NewStub(this->channel)),
      variants(v1::Variants::NewStub(this->channel)),
      inventory(v1::Inventory::NewStub(this->channel)),
      placement(v1::Placement::NewStub(this->channel)),
      admin(v1::Admin::NewStub(this->channel)) {}

CtxselClient::CtxselClient(std::shared_ptr<grpc::Channel> channel,
                           std::chrono::milliseconds timeout)
    : CtxselClient(std::vector<std::shared_ptr<grpc::Channel>>{channel},
                   timeout) {}

CtxselClient::CtxselClient(std::vector<std::shared_ptr<grpc::Channel>> replicas,
                           std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  for (std::shared_ptr<grpc::Channel>& channel : replicas) {
    replicas_.push_back(std::make_unique<Replica>(std::move(channel)));
  }
}

std::unique_ptr<CtxselClient> CtxselClient::Connect(
    const std::string& address, std::chrono::milliseconds timeout) {
  return std::make_unique<CtxselClient>(
      ServerChannels(address, grpc::InsecureChannelCredentials()), timeout);
}

std::unique_ptr<grpc::ClientContext> CtxselClient::NewContext(
    std::chrono::milliseconds extra) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout_ + extra);
  return context;
}

absl::StatusOr<std::string> CtxselClient::Ping() {
  auto response = Unary<v1::PingResponse>([&](const Replica& replica,
                                              grpc::ClientContext* context,
                                              v1::PingResponse* out) {
    return replica.ctxsel->Ping(context, v1::PingRequest(), out);
  });
  if (!response.ok()) return response.status();
  return response->server_version();
}

absl::StatusOr<v1::RegisterVariantsResponse> CtxselClient::RegisterVariants(
    const v1::RegisterVariantsRequest& request) {
  return Unary<v1::RegisterVariantsResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::RegisterVariantsResponse* out) {
        return replica.variants->RegisterVariants(context, request, out);
      },
      Resend::kNever);
}

absl::StatusOr<std::vector<v1::Variant>> CtxselClient::ListVariants(
    const std::string& kernel) {
  v1::ListVariantsRequest request;
  request.set_kernel(kernel);
  return AllPages<v1::ListVariantsResponse, v1::Variant>(
      request,
      [&](const Replica& replica, grpc::ClientContext* context,
          const v1::ListVariantsRequest& r, v1::ListVariantsResponse* out) {
        return replica.variants->ListVariants(context, r, out);
      },
      [](const v1::ListVariantsResponse& page) -> const auto& {
        return page.variants();
      });
}

absl::StatusOr<v1::Variant> CtxselClient::GetVariant(const std::string& kernel,
                                                     const std::string& name) {
  v1::GetVariantRequest request;
  request.set_kernel(kernel);
  request.set_name(name);
  auto response = Unary<v1::GetVariantResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::GetVariantResponse* out) {
        return replica.variants->GetVariant(context, request, out);
      });
  if (!response.ok()) return response.status();
  return response->variant();
}

absl::StatusOr<int64_t> CtxselClient::DeleteVariant(const std::string& kernel,
                                                    const std::string& name) {
  v1::DeleteVariantRequest request;
  request.set_kernel(kernel);
  request.set_name(name);
  return SendDelete(request);
}

absl::StatusOr<int64_t> CtxselClient::DeleteAllVariants(
    const std::string& kernel) {
  v1::DeleteVariantRequest request;
  request.set_kernel(kernel);
  request.set_all_variants(true);
  return SendDelete(request);
}

absl::StatusOr<int64_t> CtxselClient::SendDelete(
    const v1::DeleteVariantRequest& request) {
  auto response = Unary<v1::DeleteVariantResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::DeleteVariantResponse* out) {
        return replica.variants->DeleteVariant(context, request, out);
      },
      Resend::kNever);
  if (!response.ok()) return response.status();
  return response->revision();
}

absl::StatusOr<v1::ReportNodeResponse> CtxselClient::ReportNode(
    const v1::Node& node) {
  v1::ReportNodeRequest request;
  *request.mutable_node() = node;
  return Unary<v1::ReportNodeResponse>([&](const Replica& replica,
                                           grpc::ClientContext* context,
                                           v1::ReportNodeResponse* out) {
    return replica.inventory->ReportNode(context, request, out);
  });
}

absl::Status CtxselClient::Deregister(const std::string& node) {
  v1::DeregisterRequest request;
  request.set_node(node);
  return Unary<v1::DeregisterResponse>([&](const Replica& replica,
                                           grpc::ClientContext* context,
                                           v1::DeregisterResponse* out) {
           return replica.inventory->Deregister(context, request, out);
         })
      .status();
}

absl::StatusOr<std::vector<v1::NodeSummary>> CtxselClient::ListNodes(
    bool include_devices) {
  v1::ListNodesRequest request;
  request.set_include_devices(include_devices);
  return AllPages<v1::ListNodesResponse, v1::NodeSummary>(
      request,
      [&](const Replica& replica, grpc::ClientContext* context,
          const v1::ListNodesRequest& r, v1::ListNodesResponse* out) {
        return replica.inventory->ListNodes(context, r, out);
      },
      [](const v1::ListNodesResponse& page) -> const auto& {
        return page.nodes();
      });
}

absl::StatusOr<std::vector<v1::Device>> CtxselClient::ListDevices(
    const std::string& device_filter, const std::string& node) {
  v1::ListDevicesRequest request;
  request.set_device_filter(device_filter);
  request.set_node(node);
  return AllPages<v1::ListDevicesResponse, v1::Device>(
      request,
      [&](const Replica& replica, grpc::ClientContext* context,
          const v1::ListDevicesRequest& r, v1::ListDevicesResponse* out) {
        return replica.inventory->ListDevices(context, r, out);
      },
      [](const v1::ListDevicesResponse& page) -> const auto& {
        return page.devices();
      });
}

std::unique_ptr<HeartbeatStream> CtxselClient::OpenHeartbeat() {
  std::unique_ptr<HeartbeatStream> stream(new HeartbeatStream());
  stream->stream_ = Current().inventory->Heartbeat(&stream->context_);
  return stream;
}

absl::Status CtxselClient::WatchInventory(
    bool initial,
    const std::function<bool(const v1::InventoryEvent&)>& on_event,
    std::chrono::milliseconds deadline) {
  const auto until = deadline.count() > 0
                         ? std::chrono::system_clock::now() + deadline
                         : std::chrono::system_clock::time_point::max();
  WatchedInventory watched(initial);
  int failed = 0;  // streams in a row that ended without an event
  Backoff backoff(
      {absl::FromChrono(kWatchBackoff), absl::FromChrono(kWatchMaxBackoff)});
  size_t index = current_;
  while (true) {
    grpc::ClientContext context;
    if (deadline.count() > 0) context.set_deadline(until);
    auto reader = replicas_[index]->inventory->WatchInventory(
        &context, watched.NextRequest());
    v1::InventoryEvent event;
    bool received = false;
    bool stopped = false;
    while (!stopped && reader->Read(&event)) {
      received = true;
      for (const v1::InventoryEvent& delivered : watched.Take(event)) {
        if (!on_event(delivered)) {
          context.TryCancel();
          stopped = true;
          break;
        }
      }
    }
    const grpc::Status status = reader->Finish();
    if (stopped || status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return absl::OkStatus();
    }
    // A broken connection, a server going away or ending the stream, or a
    // watcher that fell behind its history: resume. Anything else is the
    // server's answer to this request.
    switch (status.error_code()) {
      case grpc::StatusCode::OK:
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
      case grpc::StatusCode::OUT_OF_RANGE:
        break;
      default:
        return FromGrpcStatus(status);
    }
    index = (index + 1) % replicas_.size();
    failed = received ? 1 : failed + 1;
    if (received) backoff.Reset();
    if (failed >= kWatchAttempts) {
      return absl::UnavailableError(absl::StrCat(
          "watch: ", failed, " streams in a row ended without an event: ",
          status.ok() ? "the server ended the stream"
                      : status.error_message()));
    }
    const absl::Duration wait = backoff.Next();
    if (std::chrono::system_clock::now() + absl::ToChronoMilliseconds(wait) >=
        until) {
      return absl::OkStatus();
    }
    absl::SleepFor(wait);
  }
}

absl::StatusOr<v1::SelectResponse> CtxselClient::Select(const v1::Job& job) {
  v1::SelectRequest request;
  *request.mutable_job() = job;
  return Select(request);
}

absl::StatusOr<v1::SelectResponse> CtxselClient::Select(
    const v1::SelectRequest& request) {
  return Unary<v1::SelectResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::SelectResponse* out) {
        return replica.placement->Select(context, request, out);
      },
      request.has_claim() ? Resend::kNever : Resend::kSafe);
}

absl::StatusOr<v1::SelectResponse> CtxselClient::SelectQueued(
    const v1::SelectRequest& request,
    const std::function<bool()>& still_wanted) {
  const auto wait = std::chrono::milliseconds(
      absl::ToInt64Milliseconds(FromProtoDuration(request.claim().wait())));
  size_t index = current_;
  if (replicas_.size() > 1) {
    CTXSEL_ASSIGN_OR_RETURN(
        index, PickForOnce(std::chrono::system_clock::now() + timeout_));
  }
  std::unique_ptr<grpc::ClientContext> context = NewContext(wait);
  v1::SelectResponse response;
  grpc::Status status;
  absl::Notification done;
  replicas_[index]->placement->async()->Select(context.get(), &request,
                                               &response, [&](grpc::Status s) {
                                                 status = std::move(s);
                                                 done.Notify();
                                               });
  bool cancelled = false;
  while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(20))) {
    if (!cancelled && !still_wanted()) {
      context->TryCancel();
      cancelled = true;
    }
  }
  if (cancelled && !status.ok()) {
    return absl::CancelledError("stopped while waiting for a claim");
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer within ", (timeout_ + wait).count(), "ms (",
                     status.error_message(), ")"));
  }
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::ExplainResponse> CtxselClient::Explain(const v1::Job& job) {
  v1::ExplainRequest request;
  *request.mutable_job() = job;
  return Unary<v1::ExplainResponse>([&](const Replica& replica,
                                        grpc::ClientContext* context,
                                        v1::ExplainResponse* out) {
    return replica.placement->Explain(context, request, out);
  });
}

absl::StatusOr<v1::CoverageResponse> CtxselClient::Coverage(
    const v1::CoverageRequest& request) {
  return Unary<v1::CoverageResponse>([&](const Replica& replica,
                                         grpc::ClientContext* context,
                                         v1::CoverageResponse* out) {
    return replica.placement->Coverage(context, request, out);
  });
}

absl::StatusOr<v1::BackupSummary> CtxselClient::Backup(std::ostream& out) {
  std::unique_ptr<grpc::ClientContext> context = NewContext();
  std::unique_ptr<grpc::ClientReader<v1::BackupChunk>> reader =
      Current().admin->Backup(context.get(), v1::BackupRequest());
  v1::BackupChunk chunk;
  v1::BackupSummary summary;
  bool first = true;
  int64_t received = 0;
  while (reader->Read(&chunk)) {
    if (first) summary = chunk.summary();
    first = false;
    out.write(chunk.data().data(),
              static_cast<std::streamsize>(chunk.data().size()));
    received += static_cast<int64_t>(chunk.data().size());
  }
  grpc::Status status = reader->Finish();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer within ", timeout_.count(), "ms (",
                     status.error_message(), ")"));
  }
  if (!status.ok()) return FromGrpcStatus(status);
  if (first || received != summary.size_bytes()) {
    return absl::DataLossError(absl::StrCat("backup stream ended after ",
                                            received, " of ",
                                            summary.size_bytes(), " bytes"));
  }
  if (!out) return absl::InternalError("cannot write the backup");
  return summary;
}

absl::StatusOr<v1::Claim> CtxselClient::RenewClaim(
    const std::string& claim_id, std::chrono::milliseconds duration) {
  v1::RenewClaimRequest request;
  request.set_claim_id(claim_id);
  *request.mutable_duration() = ToProtoDuration(absl::FromChrono(duration));
  auto response = Unary<v1::RenewClaimResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::RenewClaimResponse* out) {
        return replica.placement->RenewClaim(context, request, out);
      });
  if (!response.ok()) return response.status();
  return response->claim();
}

absl::StatusOr<v1::DeviceCordon> CtxselClient::CordonDevices(
    const v1::DeviceCordon& cordon) {
  v1::CordonDevicesRequest request;
  *request.mutable_cordon() = cordon;
  // A cordon is stored whole: sending it twice stores the same one.
  auto response = Unary<v1::CordonDevicesResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::CordonDevicesResponse* out) {
        return replica.admin->CordonDevices(context, request, out);
      });
  if (!response.ok()) return response.status();
  return response->cordon();
}

absl::Status CtxselClient::UncordonDevices(const std::string& device,
                                           const std::string& node) {
  v1::UncordonDevicesRequest request;
  request.set_device(device);
  request.set_node(node);
  // Sent once: a repeat after an unknown outcome would answer NOT_FOUND.
  return Unary<v1::UncordonDevicesResponse>(
             [&](const Replica& replica, grpc::ClientContext* context,
                 v1::UncordonDevicesResponse* out) {
               return replica.admin->UncordonDevices(context, request, out);
             },
             Resend::kNever)
      .status();
}

absl::StatusOr<std::vector<v1::DeviceCordon>> CtxselClient::ListCordons() {
  auto response = Unary<v1::ListCordonsResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::ListCordonsResponse* out) {
        return replica.admin->ListCordons(context, v1::ListCordonsRequest(),
                                          out);
      });
  if (!response.ok()) return response.status();
  return std::vector<v1::DeviceCordon>(response->cordons().begin(),
                                       response->cordons().end());
}

absl::Status CtxselClient::ReleaseClaim(const std::string& claim_id) {
  v1::ReleaseClaimRequest request;
  request.set_claim_id(claim_id);
  return Unary<v1::ReleaseClaimResponse>([&](const Replica& replica,
                                             grpc::ClientContext* context,
                                             v1::ReleaseClaimResponse* out) {
           return replica.placement->ReleaseClaim(context, request, out);
         })
      .status();
}

absl::StatusOr<int> CtxselClient::ReleaseClaimsOf(const std::string& holder) {
  v1::ReleaseClaimRequest request;
  request.set_holder(holder);
  auto response = Unary<v1::ReleaseClaimResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::ReleaseClaimResponse* out) {
        return replica.placement->ReleaseClaim(context, request, out);
      });
  if (!response.ok()) return response.status();
  return response->released_count();
}

absl::StatusOr<v1::ListClaimsResponse> CtxselClient::ListClaimsAndWaiters(
    const std::string& node) {
  v1::ListClaimsRequest request;
  request.set_node(node);
  request.set_waiting(true);
  return Unary<v1::ListClaimsResponse>([&](const Replica& replica,
                                           grpc::ClientContext* context,
                                           v1::ListClaimsResponse* out) {
    return replica.placement->ListClaims(context, request, out);
  });
}

absl::StatusOr<std::vector<v1::Claim>> CtxselClient::ListClaims(
    const std::string& node) {
  v1::ListClaimsRequest request;
  request.set_node(node);
  auto response = Unary<v1::ListClaimsResponse>(
      [&](const Replica& replica, grpc::ClientContext* context,
          v1::ListClaimsResponse* out) {
        return replica.placement->ListClaims(context, request, out);
      });
  if (!response.ok()) return response.status();
  return std::vector<v1::Claim>(response->claims().begin(),
                                response->claims().end());
}

}  // namespace ctxsel::client
