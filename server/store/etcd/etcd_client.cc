#include "server/store/etcd/etcd_client.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/backoff.h"
#include "base/grpc_status.h"
#include "base/status_details.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server::etcd {
namespace {

// A watch stream asks etcd for its progress this often, and is ended when
// etcd has sent nothing (events, progress) for kWatchSilence: a member cut
// off by the network answers nothing, and gRPC's keepalive would notice
// only after 5 s + 2 s (etcd refuses pings more often than every 5 s).
constexpr absl::Duration kProgressEvery = absl::Seconds(1);
constexpr absl::Duration kWatchSilence = absl::Seconds(3);

// Codes that say "this endpoint did not answer": try the next one.
bool Unreachable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// The start of every error IsEtcdTlsFailure() recognises.
constexpr absl::string_view kTlsFailure = "etcd TLS handshake failed";

// Whether a connection that could not be made (gRPC: "failed to connect to
// all addresses") failed in the TLS handshake. etcd took the TCP connection,
// so it runs; then a plaintext etcd closes it at the ClientHello ("Socket
// closed", "Connection reset by peer"), a certificate --etcd_ca did not
// sign fails the handshake ("Handshake failed"), and a client certificate
// etcd refuses comes back as an alert on the first read ("Endpoint read
// failed": with TLS 1.3 the client's side of the handshake ends before
// etcd checks its certificate). A refused or timed-out connect is none of
// these: etcd is down or away.
bool SaysTlsFailed(absl::string_view message) {
  if (!absl::StrContains(message, "failed to connect to all addresses") ||
      absl::StrContains(message, "timed out")) {
    return false;
  }
  for (absl::string_view sign :
       {"andshake", "SSL", "Socket closed", "Connection reset by peer",
        "Endpoint read failed"}) {
    if (absl::StrContains(message, sign)) return true;
  }
  return false;
}

grpc::ClientContext& WithDeadline(grpc::ClientContext& context,
                                  absl::Duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(timeout));
  return context;
}

}  // namespace

absl::Status CheckEtcdSecurity(const EtcdSecurity& security) {
  if (security.cert_pem.empty() != security.key_pem.empty()) {
    return absl::InvalidArgumentError(
        "--etcd_cert and --etcd_key: give both or neither");
  }
  if (security.ca_pem.empty() && !security.cert_pem.empty()) {
    return absl::InvalidArgumentError("--etcd_cert: needs --etcd_ca");
  }
  if (security.user.empty() != security.password.empty()) {
    return absl::InvalidArgumentError(
        "--etcd_user and --etcd_password_file: give both or neither");
  }
  if (security.ca_pem.empty() && !security.user.empty()) {
    return absl::InvalidArgumentError(
        "--etcd_user: needs --etcd_ca (a password is sent only over TLS)");
  }
  return absl::OkStatus();
}

bool IsEtcdTlsFailure(const absl::Status& status) {
  return absl::StartsWith(status.message(), kTlsFailure);
}

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      ++end.back();
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

absl::StatusOr<std::vector<std::string>> ParseEtcdUrl(
    const std::string& url, const std::string& field) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "etcd://")) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", url, "' is not etcd://HOST:PORT[,...]"));
  }
  std::vector<std::string> endpoints =
      absl::StrSplit(rest, ',', absl::SkipWhitespace());
  if (endpoints.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": no etcd endpoint in '", url, "'"));
  }
  for (std::string& endpoint : endpoints) {
    endpoint = std::string(absl::StripAsciiWhitespace(endpoint));
    if (!absl::StrContains(endpoint, ':')) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": etcd endpoint '", endpoint, "' has no :PORT"));
    }
  }
  return endpoints;
}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(
    const std::vector<std::string>& addresses, EtcdClientOptions options) {
  if (addresses.empty()) {
    return absl::InvalidArgumentError("no etcd endpoint");
  }
  const EtcdSecurity& security = options.security;
  if (absl::Status checked = CheckEtcdSecurity(security); !checked.ok()) {
    return checked;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (!security.ca_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security.ca_pem;
    ssl.pem_cert_chain = security.cert_pem;
    ssl.pem_private_key = security.key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  std::vector<Endpoint> endpoints;
  for (const std::string& address : addresses) {
    grpc::ChannelArguments arguments;
    // Come back quickly when etcd returns (the default backoff grows to 2
    // minutes).
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    // A member cut off by the network leaves the connection open: pings
    // find out (every 5 s, etcd's default minimum for clients, answered
    // within 2 s), so the watch breaks and the replica says it is stale.
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
    arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    Endpoint endpoint;
    endpoint.address = address;
    endpoint.channel =
        grpc::CreateCustomChannel(address, credentials, arguments);
    endpoint.kv = etcdserverpb::KV::NewStub(endpoint.channel);
    endpoint.lease = etcdserverpb::Lease::NewStub(endpoint.channel);
    endpoint.auth = etcdserverpb::Auth::NewStub(endpoint.channel);
    endpoints.push_back(std::move(endpoint));
  }
  return std::unique_ptr<EtcdClient>(
      new EtcdClient(std::move(endpoints), options));
}

std::string EtcdClient::Describe() const {
  std::vector<std::string> addresses;
  for (const Endpoint& e : endpoints_) addresses.push_back(e.address);
  return absl::StrJoin(addresses, ",");
}

absl::Status EtcdClient::CallWithFailover(
    const std::function<grpc::Status(Endpoint&, grpc::ClientContext&)>& call) {
  const size_t first = current_.load();
  grpc::Status last;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t index = (first + i) % endpoints_.size();
    last = CallOnce(endpoints_[index], call);
    if (!Unreachable(last)) {
      current_.store(index);
      return Explain(last);
    }
  }
  return Explain(last);
}

grpc::Status EtcdClient::CallOnce(
    Endpoint& endpoint,
    const std::function<grpc::Status(Endpoint&, grpc::ClientContext&)>& call) {
  for (int attempt = 0;; ++attempt) {
    std::string token;
    if (grpc::Status held = CurrentToken(endpoint, token); !held.ok()) {
      return held;
    }
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("token", token);
    grpc::Status status =
        call(endpoint, WithDeadline(context, options_.call_timeout));
    // etcd's "invalid auth token": it expired, or etcd restarted.
    if (status.error_code() != grpc::StatusCode::UNAUTHENTICATED ||
        token.empty() || attempt > 0) {
      return status;
    }
    DropToken(token);
  }
}

grpc::Status EtcdClient::CurrentToken(Endpoint& endpoint, std::string& token) {
  const EtcdSecurity& security = options_.security;
  if (security.user.empty()) return grpc::Status::OK;
  {
    absl::MutexLock lock(&token_mu_);
    token = token_;
  }
  if (!token.empty()) return grpc::Status::OK;
  etcdserverpb::AuthenticateRequest request;
  request.set_name(security.user);
  request.set_password(security.password);
  etcdserverpb::AuthenticateResponse response;
  grpc::ClientContext context;
  grpc::Status status = endpoint.auth->Authenticate(
      &WithDeadline(context, options_.call_timeout), request, &response);
  if (Unreachable(status)) return status;
  if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    // A replica told to log in never talks to an etcd anyone may write.
    return grpc::Status(
        status.error_code(),
        absl::StrCat("--etcd_user: etcd at ", endpoint.address,
                     " has authentication off (etcdctl auth enable; "
                     "docs/deployment.md): ",
                     status.error_message()));
  }
  if (!status.ok()) {
    return grpc::Status(
        status.error_code(),
        absl::StrCat("--etcd_user, --etcd_password_file: etcd refused user '",
                     security.user, "': ", status.error_message()));
  }
  absl::MutexLock lock(&token_mu_);
  token_ = token = response.token();
  return grpc::Status::OK;
}

void EtcdClient::DropToken(const std::string& token) {
  absl::MutexLock lock(&token_mu_);
  if (token_ == token) token_.clear();
}

absl::Status EtcdClient::Explain(const grpc::Status& status) const {
  if (status.ok()) return absl::OkStatus();
  if (Unreachable(status)) {
    if (!options_.security.ca_pem.empty() &&
        SaysTlsFailed(status.error_message())) {
      return WithErrorInfo(
          absl::UnavailableError(absl::StrCat(
              kTlsFailure, " (", Describe(),
              "): is etcd serving TLS with a certificate --etcd_ca signed, "
              "and does it trust --etcd_cert? ",
              status.error_message())),
          kReasonStoreUnavailable);
    }
    return WithErrorInfo(
        absl::UnavailableError(absl::StrCat("etcd unreachable (", Describe(),
                                            "): ", status.error_message())),
        kReasonStoreUnavailable);
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    const std::string& user = options_.security.user;
    return absl::PermissionDeniedError(absl::StrCat(
        status.error_message(),
        user.empty()
            ? " (etcd authentication is on: give --etcd_user and "
              "--etcd_password_file"
            : absl::StrCat(" (etcd user '", user,
                           "' needs a role with readwrite on the store prefix"),
        "; docs/deployment.md)"));
  }
  return FromGrpcStatus(status);
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const std::string& key, const std::string& range_end, int64_t revision) {
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  request.set_range_end(range_end);
  request.set_revision(revision);
  return Range(request);
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request) {
  etcdserverpb::RangeResponse response;
  absl::Status status =
      CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Range(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(
    const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  absl::Status status =
      CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Txn(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::PutResponse> EtcdClient::Put(
    const std::string& key, const std::string& value, int64_t lease) {
  etcdserverpb::PutRequest request;
  request.set_key(key);
  request.set_value(value);
  request.set_lease(lease);
  etcdserverpb::PutResponse response;
  absl::Status status =
      CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Put(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<int64_t> EtcdClient::LeaseGrant(absl::Duration ttl) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(std::max<int64_t>(
      1, absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1)))));
  etcdserverpb::LeaseGrantResponse response;
  absl::Status status =
      CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
        return e.lease->LeaseGrant(&context, request, &response);
      });
  if (!status.ok()) return status;
  if (!response.error().empty()) {
    return WithErrorInfo(
        absl::UnavailableError("etcd lease grant: " + response.error()),
        kReasonStoreUnavailable);
  }
  return response.id();
}

absl::Status EtcdClient::LeaseRevoke(int64_t lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseRevokeResponse response;
  return CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
    return e.lease->LeaseRevoke(&context, request, &response);
  });
}

absl::StatusOr<absl::Duration> EtcdClient::LeaseKeepAlive(int64_t lease) {
  etcdserverpb::LeaseKeepAliveResponse response;
  absl::Status status =
      CallWithFailover([&](Endpoint& e, grpc::ClientContext& context) {
        auto stream = e.lease->LeaseKeepAlive(&context);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease);
        if (stream->Write(request) && stream->Read(&response)) {
          stream->WritesDone();
          context.TryCancel();
          return grpc::Status::OK;
        }
        return stream->Finish();
      });
  if (!status.ok()) return status;
  if (response.ttl() <= 0) {
    return absl::NotFoundError(absl::StrCat("etcd lease ", lease, " expired"));
  }
  return absl::Seconds(response.ttl());
}

std::unique_ptr<EtcdWatch> EtcdClient::Watch(const std::string& key,
                                             const std::string& range_end,
                                             int64_t start_revision,
                                             WatchCallbacks callbacks) {
  return std::unique_ptr<EtcdWatch>(new EtcdWatch(
      this, key, range_end, start_revision, std::move(callbacks)));
}

EtcdWatch::EtcdWatch(EtcdClient* client, std::string key, std::string range_end,
                     int64_t start_revision,
                     EtcdClient::WatchCallbacks callbacks)
    : client_(client),
      key_(std::move(key)),
      range_end_(std::move(range_end)),
      callbacks_(std::move(callbacks)),
      next_revision_(start_revision) {
  thread_ = std::thread([this] { Run(); });
}

EtcdWatch::~EtcdWatch() {
  stop_.Notify();
  {
    absl::MutexLock lock(&mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  thread_.join();
}

void EtcdWatch::Run() {
  Backoff backoff({absl::Milliseconds(50), absl::Seconds(2)});
  size_t endpoint = client_->current_.load();
  // Whether the caller was last told "connected": at the start it assumes
  // so; RunStream tells it again (and sets this) once a stream is created,
  // so every break after that is told too.
  bool connected = true;
  while (!stop_.HasBeenNotified()) {
    bool delivered_any = false;
    if (!RunStream(endpoint, delivered_any, connected)) return;
    if (connected && callbacks_.on_state) callbacks_.on_state(false);
    connected = false;
    if (delivered_any) backoff.Reset();
    if (stop_.WaitForNotificationWithTimeout(backoff.Next())) return;
    endpoint = (endpoint + 1) % client_->endpoints_.size();
  }
}

bool EtcdWatch::RunStream(size_t endpoint_index, bool& delivered_any,
                          bool& connected) {
  auto& endpoint = client_->endpoints_[endpoint_index];
  auto stub = etcdserverpb::Watch::NewStub(endpoint.channel);
  grpc::ClientContext context;
  {
    absl::MutexLock lock(&mu_);
    if (stop_.HasBeenNotified()) return false;
    context_ = &context;
  }
  // etcd's WithRequireLeader: a member that loses its leader (a partition,
  // lost quorum) ends the stream instead of serving a watch that no longer
  // progresses, so the replica learns it is behind.
  context.AddMetadata("hasleader", "true");
  std::string token;
  if (grpc::Status held = client_->CurrentToken(endpoint, token); !held.ok()) {
    spdlog::warn("etcd watch of {}: {}", key_, held.error_message());
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    return !stop_.HasBeenNotified();
  }
  if (!token.empty()) context.AddMetadata("token", token);
  auto stream = stub->Watch(&context);
  etcdserverpb::WatchRequest request;
  auto* create = request.mutable_create_request();
  create->set_key(key_);
  create->set_range_end(range_end_);
  create->set_start_revision(next_revision_);
  bool ok = stream->Write(request);
  absl::Mutex heard_mu;
  absl::Time heard = absl::Now();  // the last answer read
  bool reading = true;
  std::thread prober([&] {
    absl::MutexLock lock(&heard_mu);
    auto stopped = [&reading]() { return !reading; };
    while (
        !heard_mu.AwaitWithTimeout(absl::Condition(&stopped), kProgressEvery)) {
      if (absl::Now() - heard > kWatchSilence) {
        spdlog::warn("etcd watch of {} on {}: nothing for {}; ending it", key_,
                     endpoint.address, absl::FormatDuration(kWatchSilence));
        context.TryCancel();
        return;
      }
      etcdserverpb::WatchRequest progress;
      progress.mutable_progress_request();
      heard_mu.Unlock();
      const bool written = stream->Write(progress);
      heard_mu.Lock();
      if (!written) return;
    }
  });
  etcdserverpb::WatchResponse response;
  while (ok && stream->Read(&response)) {
    {
      absl::MutexLock lock(&heard_mu);
      heard = absl::Now();
    }
    if (response.created() && !response.canceled()) {
      client_->current_.store(endpoint_index);
      connected = true;
      if (callbacks_.on_state) callbacks_.on_state(true);
    }
    if (response.compact_revision() > 0) {
      spdlog::warn("etcd watch of {}: revision {} compacted (oldest {})", key_,
                   next_revision_, response.compact_revision());
      next_revision_ =
          callbacks_.on_compacted
              ? callbacks_.on_compacted(response.compact_revision()) + 1
              : response.compact_revision();
      break;
    }
    // etcd refuses a watch whose token it no longer takes ("permission
    // denied"): the next stream logs in again.
    if (response.canceled()) {
      spdlog::warn("etcd watch of {} cancelled: {}", key_,
                   response.cancel_reason());
      client_->DropToken(token);
      break;
    }
    if (response.events_size() > 0) {
      callbacks_.on_events(response);
      delivered_any = true;
      next_revision_ =
          response.events(response.events_size() - 1).kv().mod_revision() + 1;
    }
  }
  {
    absl::MutexLock lock(&heard_mu);
    reading = false;
  }
  context.TryCancel();  // also ends a Write the prober waits on
  prober.join();
  stream->Finish();
  absl::MutexLock lock(&mu_);
  context_ = nullptr;
  return !stop_.HasBeenNotified();
}

}  // namespace ctxsel::server::etcd
