// auth.h: who is calling and what they may do (docs/security.md).
//
// A call's principal comes from its bearer token ("authorization: Bearer
// TOKEN" metadata, looked up by SHA-256 in the tokens file) or else from its
// verified client certificate (the certificate's SAN, or its CN without
// one) that carries the clientAuth usage, is not on the --revoked_certs deny
// list, and, to be an agent's, carries the agent marker (client_cert.h).
// Each RPC method allows a set of roles (MethodRoles() in auth.cc,
// the one table); every handler starts with Authorizer::Authorize().
//
//   Authorizer authorizer(AuthOptions{.tokens_file = "/etc/ctxsel/tokens"});
//   CTXSEL_RETURN_IF_ERROR(authorizer.Load().status());
//   ...
//   absl::StatusOr<Principal> who =
//       authorizer.Authorize(*context, "Variants/RegisterVariants");
//   if (!who.ok()) return ToGrpcStatus(who.status());
#ifndef CTXSEL_SERVER_ACCESS_AUTH_H_
#define CTXSEL_SERVER_ACCESS_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "formats/tokens_file.h"
#include "server/access/client_cert.h"
#include "server/access/principal_limits.h"
#include "server/access/refusal_log.h"

namespace ctxsel::server {

// Whether the method table has a rule for `method` ("Service/Method"); a
// method without one is refused to everyone.
bool HasMethodRule(absl::string_view method);

// The header in which the front proxy (tools/front/haproxy.cfg) passes the
// identity of the client certificate it verified; read only on calls whose
// own TLS peer is the front (AuthOptions::front_identity).
inline constexpr char kFrontClientCertHeader[] = "x-ctxsel-client-cert";
// The same certificate, DER in base64, so that the server applies to it the
// rules it applies to one presented directly (clientAuth, the agent marker,
// the deny list's fingerprints: client_cert.h).
inline constexpr char kFrontClientCertDerHeader[] = "x-ctxsel-client-cert-der";

// What a call presented to say who it is: a bearer token ("authorization:
// Bearer TOKEN" metadata, which wins), or a verified client certificate.
struct Credential {
  enum class Kind { kNone, kToken, kMalformedToken, kCertificate };
  Kind kind = Kind::kNone;
  // kToken: the token's SHA-256 (hex; the token itself is not kept);
  // kCertificate: the certificate's identity (its first SAN other than the
  // agent marker, or its CN; through the front, the CN it forwards).
  std::string id;
  // kCertificate: what the certificate says beyond its identity (usage,
  // marker, fingerprint); client_auth is false when it could not be read.
  ClientCert cert;
};
// A call whose verified certificate is `front_identity` (when not empty)
// came through the front: its certificate is the one the front names in
// kFrontClientCertHeader (and describes in kFrontClientCertDerHeader), or
// none; the front's own names nobody.
Credential CredentialOf(const grpc::ServerContextBase& context,
                        absl::string_view front_identity = "");

struct AuthOptions {
  // Off: every call is allowed, as principal "anonymous" with role admin
  // (--insecure without --tokens_file, for local tests and demos only).
  bool required = true;
  // The tokens file; empty: no tokens, only client certificates.
  std::string tokens_file;
  // The deny list of client certificates (client_cert.h); empty: none.
  std::string revoked_certs;
  // Per-principal limits; not applied when `required` is off (there are no
  // principals to tell apart).
  PrincipalLimitOptions limits;
  // The certificate identity of the front proxy (--front_identity), whose
  // kFrontClientCertHeader is trusted; empty: no front, the header is never
  // read.
  std::string front_identity;
};

class Authorizer {
 public:
  explicit Authorizer(AuthOptions options);

  // (Re)reads options.tokens_file and options.revoked_certs, then revokes
  // every open stream they no longer grant (StreamGrant); returns how many.
  // On an error the previous files stay in force and no stream is revoked.
  // SIGHUP calls this.
  absl::StatusOr<int> Load();

  // The tokens file loaded now, for what else it configures (the claim
  // caps, TokenTable::principal_limits and holder_limits); never null.
  std::shared_ptr<const TokenTable> tokens() const {
    std::shared_ptr<const Grants> loaded = grants();
    return std::shared_ptr<const TokenTable>(loaded, &loaded->tokens);
  }

  // The caller of `method` ("Service/Method", e.g. "Variants/GetVariant"),
  // if it may call it. UnauthenticatedError without credentials or with an
  // unknown token; PermissionDeniedError naming the principal, its role
  // and the roles allowed. Never puts a token in the message. A refusal is
  // logged with the caller's address (RefusalLog: a line a second at most).
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context,
                                      absl::string_view method) const;
  absl::StatusOr<Principal> Authorize(const Credential& credential,
                                      absl::string_view method) const;

  // A stream an authorized caller holds open (a heartbeat, a watch, a
  // reflection stream). It counts against the principal's stream limit,
  // and a Load() after which the credential it was opened with no longer
  // names the same principal and role, or that role may no longer call the
  // stream's method, runs its `revoke` once (under the Authorizer's stream
  // lock: `revoke` must not destroy a StreamGrant, nor wait for a thread
  // that may). The stream's reactor holds it until the stream is done.
  class StreamGrant {
   public:
    StreamGrant(StreamGrant&& other) noexcept
        : authorizer_(std::exchange(other.authorizer_, nullptr)),
          id_(other.id_),
          principal_(std::move(other.principal_)),
          stream_(std::move(other.stream_)) {}
    StreamGrant& operator=(StreamGrant&&) = delete;
    ~StreamGrant();
    const Principal& principal() const { return principal_; }

   private:
    friend class Authorizer;
    StreamGrant(const Authorizer* authorizer, int64_t id, Principal principal,
                PrincipalLimits::Stream stream)
        : authorizer_(authorizer),
          id_(id),
          principal_(std::move(principal)),
          stream_(std::move(stream)) {}
    const Authorizer* authorizer_;  // null: not registered
    int64_t id_;
    Principal principal_;
    PrincipalLimits::Stream stream_;
  };
  // Authorize() for a stream, and its grant; also ResourceExhaustedError
  // when the principal already holds its limit of streams.
  absl::StatusOr<StreamGrant> AuthorizeStream(
      const grpc::ServerContextBase& context, absl::string_view method,
      std::function<void()> revoke) const;
  absl::StatusOr<StreamGrant> AuthorizeStream(
      const Credential& credential, absl::string_view method,
      std::function<void()> revoke) const;

  // For agent principals: OK when `node` is the principal's own node;
  // PermissionDeniedError naming both otherwise. Other roles pass (the
  // method table already limited them).
  static absl::Status CheckNode(const Principal& principal,
                                absl::string_view node);

  // Whether `principal` may act on what `owner` created (its own, or admin).
  static bool MayActFor(const Principal& principal, absl::string_view owner);

  // The per-principal rate and stream limits (principal_limits.h).
  PrincipalLimits& limits() const { return limits_; }

 private:
  // An open stream, as Load() rechecks it.
  struct OpenStream {
    Credential credential;
    std::string method;
    Principal principal;
    std::function<void()> revoke;
    bool revoked = false;
  };
  // What Load() read: the tokens and certificate roles, and the deny list.
  struct Grants {
    TokenTable tokens;
    RevokedCerts revoked;
  };
  std::shared_ptr<const Grants> grants() const ABSL_LOCKS_EXCLUDED(mu_);
  // Runs the `revoke` of each open stream `grants` no longer grant.
  int RevokeStreams(const Grants& grants) const
      ABSL_LOCKS_EXCLUDED(streams_mu_);
  void CloseStream(int64_t id) const ABSL_LOCKS_EXCLUDED(streams_mu_);

  const AuthOptions options_;
  mutable PrincipalLimits limits_;
  mutable RefusalLog refusals_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Grants> grants_ ABSL_GUARDED_BY(mu_);
  // Taken before any lock a `revoke` takes (a reactor's).
  mutable absl::Mutex streams_mu_;
  mutable int64_t next_stream_id_ ABSL_GUARDED_BY(streams_mu_) = 1;
  mutable std::map<int64_t, OpenStream> streams_ ABSL_GUARDED_BY(streams_mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_ACCESS_AUTH_H_
