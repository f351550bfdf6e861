// C++ client library for a ctxsel server: one method per ctxsel.v1 RPC,
// with list calls following the pages for you.
//
//   auto client = ctxsel::client::CtxselClient::Connect("127.0.0.1:7070");
//   absl::StatusOr<std::string> version = client->Ping();
//
//   ctxsel::v1::Job job;
//   job.set_kernel("saxpy");
//   job.add_construct()->set_name("target");
//   absl::StatusOr<ctxsel::v1::SelectResponse> answer = client->Select(job);
//   // answer->placement().device().id() == "node7/gpu0"
//
// Every unary call (each page of a listing too) has a deadline, the
// constructor's `timeout`, and returns the server's error as an absl::Status
// with the same code, message and details; a call that passes its deadline
// returns DEADLINE_EXCEEDED naming the deadline ("no answer within 300ms").
//
// Failover between replicas. A client made with one channel per replica
// (base/server_target.h ServerChannels, e.g. for --server=a:7070,b:7070)
// sends each call to the replica that answered last, and moves to the next
// when that one does not answer:
//   * Each attempt has a share of what is left of the call's deadline,
//     split evenly over the replicas not yet tried: with the default 5 s
//     and two replicas, a paused or cut-off replica costs a call at most
//     2.5 s before the other one has it (timeout / replicas in general).
//   * A call that is safe to send twice is tried on the next replica after
//     UNAVAILABLE or DEADLINE_EXCEEDED: every listing and Get, Ping,
//     Explain, Coverage, a Select without a claim, RenewClaim (it sets the
//     end again), ReleaseClaim and ReleaseClaimsOf (a second release ends
//     nothing more; the one that finds the claim gone answers NOT_FOUND),
//     ReportNode and Deregister.
//   * A call that is not is sent at most once: a claiming Select (a second
//     claim would hold a second device for the same holder, and a paused
//     replica may still make the first when it resumes), RegisterVariants,
//     DeleteVariant and DeleteAllVariants. It goes to the first replica,
//     from the one that answered last, that answers a Ping within its
//     share, with the rest of the deadline; what that replica answers is
//     returned. One that stops between the Ping and the call leaves the
//     outcome unknown (DEADLINE_EXCEEDED or UNAVAILABLE); a claim it made
//     then ends at its duration.
// Streams (Heartbeat, Backup) use the replica that answered last; a watch
// moves to the next replica each time its stream breaks.
#ifndef CTXSEL_CLIENT_CTXSEL_CLIENT_H_
#define CTXSEL_CLIENT_CTXSEL_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

namespace ctxsel::client {

// An open Heartbeat stream of one node (see ctxsel.v1.Inventory.Heartbeat).
//
//   auto beats = client->OpenHeartbeat();
//   absl::StatusOr<v1::HeartbeatResponse> r = beats->Beat(request);
//   if (r.ok() && r->action() == v1::HeartbeatResponse::ACTION_REREPORT) ...
class HeartbeatStream {
 public:
  // Sends one beat and waits for its answer. An error ends the stream.
  absl::StatusOr<v1::HeartbeatResponse> Beat(const v1::HeartbeatRequest& beat);
  // Half-closes and returns the stream's final status.
  absl::Status Close();
  ~HeartbeatStream();

 private:
  friend class CtxselClient;
  HeartbeatStream() = default;
  grpc::ClientContext context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::HeartbeatRequest, v1::HeartbeatResponse>>
      stream_;
  bool closed_ = false;
};

class CtxselClient {
 public:
  // WatchInventory's reconnects (see there).
  static constexpr std::chrono::milliseconds kWatchBackoff{100};
  static constexpr std::chrono::milliseconds kWatchMaxBackoff{2000};
  static constexpr int kWatchAttempts = 8;

  explicit CtxselClient(
      std::shared_ptr<grpc::Channel> channel,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // One channel per replica, failing over between them (see above); the
  // first is tried first.
  explicit CtxselClient(
      std::vector<std::shared_ptr<grpc::Channel>> replicas,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  // Plaintext channels to `address` (host:port, or a list of replicas
  // "a:7070,b:7070" to fail over between), for servers started with
  // --insecure; every unary call gets `timeout`. For TLS and tokens, pass
  // the constructor a channel made with MakeChannelCredentials()
  // (base/channel_credentials.h).
  static std::unique_ptr<CtxselClient> Connect(
      const std::string& address,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  // Round-trips a no-op call; returns the server's version.
  absl::StatusOr<std::string> Ping();

  // --- Variants ---
  absl::StatusOr<v1::RegisterVariantsResponse> RegisterVariants(
      const v1::RegisterVariantsRequest& request);
  // Every variant of `kernel` (all kernels when empty), all pages.
  absl::StatusOr<std::vector<v1::Variant>> ListVariants(
      const std::string& kernel);
  absl::StatusOr<v1::Variant> GetVariant(const std::string& kernel,
                                         const std::string& name);
  // Returns the registry revision after the delete.
  absl::StatusOr<int64_t> DeleteVariant(const std::string& kernel,
                                        const std::string& name);
  // Every variant of `kernel` in one atomic change; the new revision.
  absl::StatusOr<int64_t> DeleteAllVariants(const std::string& kernel);

  // --- Inventory ---
  absl::StatusOr<v1::ReportNodeResponse> ReportNode(const v1::Node& node);
  absl::Status Deregister(const std::string& node);
  // Every live node, all pages.
  absl::StatusOr<std::vector<v1::NodeSummary>> ListNodes(bool include_devices);
  // Every live device that passes `device_filter` (empty: all) on `node`
  // (empty: any).
  absl::StatusOr<std::vector<v1::Device>> ListDevices(
      const std::string& device_filter, const std::string& node);
  // A Heartbeat stream without a deadline; it lives until closed.
  std::unique_ptr<HeartbeatStream> OpenHeartbeat();
  // Streams inventory events to `on_event` until it returns false or
  // `deadline` passes (no deadline when it is zero); both return OK.
  //
  // Across failovers the caller sees one stream, with no gap and no
  // duplicate. When the stream breaks (UNAVAILABLE, a server that goes
  // away, a stream that ends without the caller stopping it, OUT_OF_RANGE
  // for a watcher that fell behind), the watch opens another on the same
  // channel after a backoff (base/backoff.h: kWatchBackoff, doubling up to
  // kWatchMaxBackoff, each wait drawn from its upper half), on the next
  // replica of a client made with several (a channel made for a server
  // list by ServerTarget moves to the next address that answers). It
  // resumes after the last event it delivered: a server that still holds
  // the events since then sends them as they were; any other (another
  // replica, a restarted server, trimmed history) sends its live nodes,
  // which the watch compares with the nodes it has delivered, so the caller
  // gets KIND_ADDED (reason "resync") for a node it does not have,
  // KIND_CHANGED for one whose devices differ, KIND_REMOVED for one gone,
  // and nothing for the rest. The snapshot that answers `initial` is read
  // the same way (reason "initial"). A watch without `initial` whose first
  // stream breaks before any event gets the live nodes as KIND_ADDED
  // (there is nothing to resume from). KIND_RESYNC and KIND_RESYNC_END
  // never reach `on_event` (client/inventory_watch.h does this).
  //
  // `sequence` and `stream_epoch` are those of the server streaming at the
  // time: after a failover `sequence` may jump, back or forward; compare
  // sequences only within one epoch. The watch keeps the delivered nodes
  // (each as last delivered) in memory.
  //
  // Errors: a stream the server refuses (e.g. PERMISSION_DENIED,
  // INVALID_ARGUMENT) returns its status at once; UNAVAILABLE, with the last
  // error, once kWatchAttempts streams in a row ended without an event
  // (every address down through 3.55 to 7.1 s of backoff: 100 ms doubling
  // to 2 s, seven waits, each jittered).
  absl::Status WatchInventory(
      bool initial,
      const std::function<bool(const v1::InventoryEvent&)>& on_event,
      std::chrono::milliseconds deadline = std::chrono::milliseconds(0));

  // --- Placement ---
  absl::StatusOr<v1::SelectResponse> Select(const v1::Job& job);
  // The whole request, e.g. with a claim (response.claim() then holds it;
  // RESOURCE_EXHAUSTED when every fitting device is claimed).
  absl::StatusOr<v1::SelectResponse> Select(const v1::SelectRequest& request);
  // Select with ClaimRequest.wait: the call may wait in the server's queue,
  // so its deadline is timeout() plus the wait. `still_wanted` is asked
  // about every 20 ms while it waits; when it returns false the call is
  // cancelled (the server drops it from its queue) and CANCELLED returned.
  absl::StatusOr<v1::SelectResponse> SelectQueued(
      const v1::SelectRequest& request,
      const std::function<bool()>& still_wanted);
  absl::StatusOr<v1::ExplainResponse> Explain(const v1::Job& job);
  // Where the kernel's variants run (docs/coverage.md); stores nothing.
  absl::StatusOr<v1::CoverageResponse> Coverage(
      const v1::CoverageRequest& request);

  // --- Admin ---
  // Streams a backup of the server's store into `out`; returns what it
  // holds. The whole stream has one deadline, timeout(). DATA_LOSS when the
  // stream ends short of the size the server announced.
  absl::StatusOr<v1::BackupSummary> Backup(std::ostream& out);

  // --- Claims (made by Select with a claim) ---
  // The claim then ends `duration` from now; NOT_FOUND when it has ended.
  absl::StatusOr<v1::Claim> RenewClaim(const std::string& claim_id,
                                       std::chrono::milliseconds duration);
  absl::Status ReleaseClaim(const std::string& claim_id);
  // Ends every live claim of `holder` (ClaimRequest.holder, e.g.
  // "slurm-42.0"); how many ended, 0 when it held none.
  absl::StatusOr<int> ReleaseClaimsOf(const std::string& holder);
  // The live claims on `node`'s devices (empty: all nodes).
  absl::StatusOr<std::vector<v1::Claim>> ListClaims(const std::string& node);
  // Those, and the claiming Selects waiting in the server's queue
  // (ListClaimsResponse.waiters; a server older than the queue lists none).
  absl::StatusOr<v1::ListClaimsResponse> ListClaimsAndWaiters(
      const std::string& node);

  // Operators' cordons (Admin.CordonDevices): `cordon` names a device or
  // a node; the stored cordon.
  absl::StatusOr<v1::DeviceCordon> CordonDevices(
      const v1::DeviceCordon& cordon);
  // Exactly one of `device` and `node`.
  absl::Status UncordonDevices(const std::string& device,
                               const std::string& node);
  absl::StatusOr<std::vector<v1::DeviceCordon>> ListCordons();

  // The channel of the replica that answered last.
  const std::shared_ptr<grpc::Channel>& channel() const {
    return replicas_[current_]->channel;
  }
  // The deadline of each unary call, counted from its start.
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  // One replica's channel and the stubs on it.
  struct Replica {
    explicit Replica(std::shared_ptr<grpc::Channel> channel);
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::Ctxsel::Stub> ctxsel;
    std::unique_ptr<v1::Variants::Stub> variants;
    std::unique_ptr<v1::Inventory::Stub> inventory;
    std::unique_ptr<v1::Placement::Stub> placement;
    std::unique_ptr<v1::Admin::Stub> admin;
  };
  // Whether a call may be sent to another replica after an attempt whose
  // outcome is unknown (the rule above).
  enum class Resend { kSafe, kNever };
  using Deadline = std::chrono::system_clock::time_point;

  // A context whose deadline is now + timeout_ + `extra`.
  std::unique_ptr<grpc::ClientContext> NewContext(
      std::chrono::milliseconds extra = std::chrono::milliseconds(0)) const;
  // The replica that answered last, for streams.
  const Replica& Current() const { return *replicas_[current_]; }
  // The first replica from Current() that answers a Ping by its share of
  // `deadline`, for a call sent once (made current); UNAVAILABLE when none.
  absl::StatusOr<size_t> PickForOnce(Deadline deadline) const;
  // Calls `call(replica, context, &response)` under the failover rule
  // above and converts its status.
  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(Call call,
                                 Resend resend = Resend::kSafe) const;
  // DeleteVariant with `request`; the new revision.
  absl::StatusOr<int64_t> SendDelete(const v1::DeleteVariantRequest& request);
  // Every item of a paged listing (see the .cc).
  template <typename Response, typename Item, typename Request, typename Call,
            typename Items>
  absl::StatusOr<std::vector<Item>> AllPages(Request request, Call call,
                                             Items items) const;

  std::vector<std::unique_ptr<Replica>> replicas_;
  // The replica that answered last; calls start there.
  mutable std::atomic<size_t> current_{0};
  std::chrono::milliseconds timeout_;
};

}  // namespace ctxsel::client

#endif  // CTXSEL_CLIENT_CTXSEL_CLIENT_H_
