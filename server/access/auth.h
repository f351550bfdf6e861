// auth.h: who is calling and what they may do (docs/security.md).
//
// A call's principal comes from its bearer token ("authorization: Bearer
// TOKEN" metadata, looked up by SHA-256 in the tokens file) or else from its
// verified client certificate (the certificate's SAN, or its CN without
// one). Each RPC method allows a set of roles (MethodRoles() in auth.cc,
// the one table); every handler starts with Authorizer::Authorize().
//
//   Authorizer authorizer(AuthOptions{.tokens_file = "/etc/ctxsel/tokens"});
//   CTXSEL_RETURN_IF_ERROR(authorizer.Load());
//   ...
//   absl::StatusOr<Principal> who =
//       authorizer.Authorize(*context, "Variants/RegisterVariants");
//   if (!who.ok()) return ToGrpcStatus(who.status());
#ifndef CTXSEL_SERVER_ACCESS_AUTH_H_
#define CTXSEL_SERVER_ACCESS_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/access/principal_limits.h"

namespace ctxsel::server {

enum class Role { kAdmin, kAgent, kLauncher, kReader };

// "admin", "agent", "launcher", "reader".
absl::string_view RoleName(Role role);
// The role named `name`; InvalidArgumentError naming the four otherwise.
absl::StatusOr<Role> RoleFromName(absl::string_view name);

// An authenticated caller. For role agent, `name` is the node it speaks
// for: it may report, heartbeat and deregister only that node.
struct Principal {
  std::string name;
  Role role = Role::kReader;
};

// Lowercase hex SHA-256 of `text` (what the tokens file holds per token).
std::string Sha256Hex(absl::string_view text);

// A fresh random token: "ctx_" and 64 hex digits (256 bits).
std::string NewToken();

// Whether the method table has a rule for `method` ("Service/Method"); a
// method without one is refused to everyone.
bool HasMethodRule(absl::string_view method);

// The tokens-file line for `token` ("ROLE NAME SHA256").
std::string TokenLine(Role role, absl::string_view name,
                      absl::string_view token);

// One parsed tokens file. Lines: "ROLE NAME SHA256HEX" (a bearer token) or
// "ROLE NAME cert" (a client certificate whose identity is NAME has ROLE;
// without such a line a verified certificate is an agent for node NAME);
// '#' starts a comment. Errors name the line: InvalidArgumentError.
struct TokenTable {
  std::map<std::string, Principal> by_hash;  // SHA-256 hex -> principal
  std::map<std::string, Role> cert_roles;    // certificate identity -> role
};
absl::StatusOr<TokenTable> ParseTokens(absl::string_view text,
                                       absl::string_view file_name);

struct AuthOptions {
  // Off: every call is allowed, as principal "anonymous" with role admin
  // (--insecure without --tokens_file, for local tests and demos only).
  bool required = true;
  // The tokens file; empty: no tokens, only client certificates.
  std::string tokens_file;
  // Per-principal limits; not applied when `required` is off (there are no
  // principals to tell apart).
  PrincipalLimitOptions limits;
};

class Authorizer {
 public:
  explicit Authorizer(AuthOptions options);

  // (Re)reads options.tokens_file; on an error the previous table stays.
  // SIGHUP calls this.
  absl::Status Load();

  // The caller of `method` ("Service/Method", e.g. "Variants/GetVariant"),
  // if it may call it. UnauthenticatedError without credentials or with an
  // unknown token; PermissionDeniedError naming the principal, its role
  // and the roles allowed. Never puts a token in the message.
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context,
                                      absl::string_view method) const;

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
  absl::StatusOr<Principal> Identify(
      const grpc::ServerContextBase& context) const;

  const AuthOptions options_;
  mutable PrincipalLimits limits_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenTable> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_ACCESS_AUTH_H_
