// etcd_client.h: a small client of etcd's v3 gRPC API (third_party/etcd),
// on our own gRPC stack: the KV calls, leases and watches the etcd store
// (etcd_store.h) and replica sync (replica_sync.h) need, over one or more
// endpoints. A call that cannot reach an endpoint (UNAVAILABLE, or no
// answer within the call timeout) is tried on the next one, once around
// the list; when none answers the call fails with UNAVAILABLE "etcd
// unreachable (127.0.0.1:2379, ...): ...". etcd's own errors keep their
// gRPC code.
//
// Secured (EtcdSecurity, docs/deployment.md "Securing etcd"): TLS that
// verifies etcd's certificate against a CA and presents a client
// certificate, and etcd authentication: the token Auth.Authenticate gives
// for the user and password goes with every call as `token` metadata, and
// is asked for again when etcd no longer takes it (it expired, or etcd
// restarted). A TLS handshake that fails is UNAVAILABLE "etcd TLS handshake
// failed ..." (IsEtcdTlsFailure), a refused password INVALID_ARGUMENT, an
// etcd with authentication off FAILED_PRECONDITION, each naming the flags
// (--etcd_ca, --etcd_cert, --etcd_key, --etcd_user, --etcd_password_file).
//
//   absl::StatusOr<std::unique_ptr<EtcdClient>> etcd =
//       EtcdClient::Create({"10.0.0.1:2379", "10.0.0.2:2379"});
//   absl::StatusOr<etcdserverpb::RangeResponse> all =
//       (*etcd)->Range("/ctxsel/", PrefixEnd("/ctxsel/"));
//
// Thread safety: every method may be called from any thread.
#ifndef CTXSEL_SERVER_STORE_ETCD_ETCD_CLIENT_H_
#define CTXSEL_SERVER_STORE_ETCD_ETCD_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace ctxsel::server::etcd {

// The end of the range of keys that start with `prefix` (etcd's range_end).
std::string PrefixEnd(const std::string& prefix);

// "etcd://HOST:PORT[,HOST:PORT...]" -> the endpoints. InvalidArgumentError
// naming `field` for another scheme or an empty list.
absl::StatusOr<std::vector<std::string>> ParseEtcdUrl(const std::string& url,
                                                      const std::string& field);

// How a replica checks etcd's identity and proves its own. All empty:
// plaintext and no etcd authentication.
struct EtcdSecurity {
  // PEM CA that signed etcd's certificate; set: TLS (the certificate must
  // name the endpoint's host or IP address).
  std::string ca_pem;
  // PEM client certificate and its key, for etcd's --client-cert-auth;
  // both or neither, and only with ca_pem.
  std::string cert_pem;
  std::string key_pem;
  // etcd authentication: a user with a role on the store prefix and its
  // password; both or neither, and only with TLS (a password is never sent
  // in the clear).
  std::string user;
  std::string password;
};

// The rules an EtcdSecurity must keep (above), each broken one an
// InvalidArgumentError naming its flags.
absl::Status CheckEtcdSecurity(const EtcdSecurity& security);

struct EtcdClientOptions {
  // How long one call may wait for one endpoint.
  absl::Duration call_timeout = absl::Seconds(2);
  EtcdSecurity security;
};

// Whether `status` (an EtcdClient error) says the TLS handshake with etcd
// failed: a plaintext etcd, a certificate --etcd_ca did not sign, or a
// client certificate etcd refused. Waiting does not mend it.
bool IsEtcdTlsFailure(const absl::Status& status);

class EtcdWatch;

class EtcdClient {
 public:
  // Makes channels to `endpoints` (host:port); calls nothing yet.
  // CheckEtcdSecurity's errors.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(
      const std::vector<std::string>& endpoints,
      EtcdClientOptions options = {});

  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const std::string& key, const std::string& range_end,
      int64_t revision = 0);
  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request);
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(
      const etcdserverpb::TxnRequest& request);
  absl::StatusOr<etcdserverpb::PutResponse> Put(const std::string& key,
                                                const std::string& value,
                                                int64_t lease = 0);

  // A new lease of `ttl` (whole seconds, at least 1); its id.
  absl::StatusOr<int64_t> LeaseGrant(absl::Duration ttl);
  // NotFound when the lease is gone already.
  absl::Status LeaseRevoke(int64_t lease);
  // Renews `lease` once; its remaining TTL. NotFoundError when it expired.
  absl::StatusOr<absl::Duration> LeaseKeepAlive(int64_t lease);

  // Streams the events of the keys in [key, range_end) from
  // `start_revision` on to `on_events` (on the watch's thread), each
  // revision's events in one call. When the stream breaks it is opened
  // again (next endpoint, growing backoff with jitter up to 2 s,
  // base/backoff.h) from the revision after the last one delivered, and
  // `on_state` (if set) is told false, then true once a stream is in place
  // again. When the revision asked for has been compacted away, `on_compacted`
  // is called with the oldest revision still held: the caller reads the whole
  // range again and returns the revision it read at; the watch goes on after
  // it. A stream requires a leader (a member without one ends it), asks for
  // etcd's progress every second, and is ended as broken when etcd sent nothing
  // for 3 s (a member cut off by the network).
  struct WatchCallbacks {
    std::function<void(const etcdserverpb::WatchResponse&)> on_events;
    std::function<void(bool connected)> on_state;
    std::function<int64_t(int64_t compact_revision)> on_compacted;
  };
  std::unique_ptr<EtcdWatch> Watch(const std::string& key,
                                   const std::string& range_end,
                                   int64_t start_revision,
                                   WatchCallbacks callbacks);

  // "127.0.0.1:2379,127.0.0.1:22379", for logs and errors.
  std::string Describe() const;

 private:
  struct Endpoint {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
  };
  friend class EtcdWatch;

  EtcdClient(std::vector<Endpoint> endpoints, EtcdClientOptions options)
      : endpoints_(std::move(endpoints)), options_(std::move(options)) {}
  // Runs `call` on each endpoint from the current one until one answers;
  // the one that answered becomes current. With etcd authentication each
  // call carries the token, and one etcd refuses is renewed once.
  absl::Status CallWithFailover(
      const std::function<grpc::Status(Endpoint&, grpc::ClientContext&)>& call);
  // `call` on `endpoint`, with the token when etcd authentication is on;
  // when etcd refuses the token, once more with a new one.
  grpc::Status CallOnce(
      Endpoint& endpoint,
      const std::function<grpc::Status(Endpoint&, grpc::ClientContext&)>& call);
  // Sets `token` to the one held, or asks `endpoint` for one (with the
  // flags named in the error when etcd refuses the user).
  grpc::Status CurrentToken(Endpoint& endpoint, std::string& token);
  // Forgets `token`, which etcd refused, so the next call asks again.
  void DropToken(const std::string& token);
  // etcd's `status` as ours, saying which flags to check when the TLS
  // handshake or a permission failed.
  absl::Status Explain(const grpc::Status& status) const;

  std::vector<Endpoint> endpoints_;
  const EtcdClientOptions options_;
  std::atomic<size_t> current_{0};
  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
};

// A running watch (EtcdClient::Watch); destroying it cancels the stream
// and joins its thread. The EtcdClient must outlive it.
class EtcdWatch {
 public:
  ~EtcdWatch();
  EtcdWatch(const EtcdWatch&) = delete;
  EtcdWatch& operator=(const EtcdWatch&) = delete;

 private:
  friend class EtcdClient;
  EtcdWatch(EtcdClient* client, std::string key, std::string range_end,
            int64_t start_revision, EtcdClient::WatchCallbacks callbacks);
  void Run();
  // One stream, until it breaks or the watch stops; false when stopping.
  // Sets `connected` (and tells on_state) once the stream is created.
  bool RunStream(size_t endpoint, bool& delivered_any, bool& connected);

  EtcdClient* const client_;
  const std::string key_;
  const std::string range_end_;
  const EtcdClient::WatchCallbacks callbacks_;
  int64_t next_revision_;  // only the watch thread touches it
  absl::Notification stop_;
  absl::Mutex mu_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;
};

}  // namespace ctxsel::server::etcd

#endif  // CTXSEL_SERVER_STORE_ETCD_ETCD_CLIENT_H_
