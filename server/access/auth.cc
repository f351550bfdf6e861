#include "server/access/auth.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/flag_file.h"
#include "base/status_details.h"
#include "base/status_macros.h"

namespace ctxsel::server {
namespace {

// Which roles may call each method: the one place the API's access rules
// live (docs/security.md has the same table for people). Health checking
// is not here: it needs no credentials (load balancers ask it).
struct MethodRow {
  absl::string_view method;
  std::vector<Role> roles;
};
const std::vector<MethodRow>& MethodRoles() {
  using R = Role;
  static const auto* table = new std::vector<MethodRow>{
      {"Ctxsel/Ping", {R::kAdmin, R::kAgent, R::kLauncher, R::kReader}},
      {"Variants/RegisterVariants", {R::kAdmin}},
      {"Variants/DeleteVariant", {R::kAdmin}},
      {"Variants/ListVariants", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Variants/GetVariant", {R::kAdmin, R::kLauncher, R::kReader}},
      // Agents: their own node only (Authorizer::CheckNode).
      {"Inventory/ReportNode", {R::kAgent}},
      {"Inventory/Heartbeat", {R::kAgent}},
      {"Inventory/Deregister", {R::kAdmin, R::kAgent}},
      {"Inventory/ListNodes", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Inventory/ListDevices", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Inventory/WatchInventory", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Placement/Select", {R::kAdmin, R::kLauncher}},
      {"Placement/Explain", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Placement/Coverage", {R::kAdmin, R::kLauncher, R::kReader}},
      // Launchers: their own claims only (Authorizer::MayActFor).
      {"Placement/RenewClaim", {R::kAdmin, R::kLauncher}},
      {"Placement/ReleaseClaim", {R::kAdmin, R::kLauncher}},
      {"Placement/ListClaims", {R::kAdmin, R::kLauncher, R::kReader}},
      {"Admin/Backup", {R::kAdmin}},
      {"Admin/CordonDevices", {R::kAdmin}},
      {"Admin/UncordonDevices", {R::kAdmin}},
      {"Admin/ListCordons", {R::kAdmin, R::kLauncher, R::kReader}},
      // With --reflection: the API's descriptors, a read like any other.
      {"ServerReflection/ServerReflectionInfo",
       {R::kAdmin, R::kAgent, R::kLauncher, R::kReader}},
  };
  return *table;
}

const MethodRow* FindMethod(absl::string_view method) {
  for (const MethodRow& row : MethodRoles()) {
    if (row.method == method) return &row;
  }
  return nullptr;
}

std::string RoleList(const std::vector<Role>& roles) {
  return absl::StrJoin(roles, ", ", [](std::string* out, Role role) {
    absl::StrAppend(out, RoleName(role));
  });
}

}  // namespace

bool HasMethodRule(absl::string_view method) {
  return FindMethod(method) != nullptr;
}

namespace {

PrincipalLimitOptions EffectiveLimits(const AuthOptions& options) {
  if (options.required) return options.limits;
  PrincipalLimitOptions none;
  none.reports_per_minute = 0;
  none.heartbeats_per_second = 0;
  none.registrations_per_minute = 0;
  none.max_streams = 0;
  return none;
}

}  // namespace

Authorizer::Authorizer(AuthOptions options)
    : options_(std::move(options)),
      limits_(EffectiveLimits(options_)),
      grants_(std::make_shared<const Grants>()) {}

absl::StatusOr<int> Authorizer::Load() {
  if (options_.tokens_file.empty() && options_.revoked_certs.empty()) return 0;
  auto loaded = std::make_shared<Grants>();
  if (!options_.tokens_file.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::string text,
                            ReadFlagFile("tokens_file", options_.tokens_file));
    CTXSEL_ASSIGN_OR_RETURN(loaded->tokens,
                            ParseTokens(text, options_.tokens_file));
  }
  if (!options_.revoked_certs.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(
        std::string text,
        ReadFlagFile("revoked_certs", options_.revoked_certs));
    CTXSEL_ASSIGN_OR_RETURN(loaded->revoked,
                            ParseRevokedCerts(text, options_.revoked_certs));
  }
  {
    absl::MutexLock lock(&mu_);
    grants_ = loaded;
  }
  return RevokeStreams(*loaded);
}

std::shared_ptr<const Authorizer::Grants> Authorizer::grants() const {
  absl::MutexLock lock(&mu_);
  return grants_;
}

Credential CredentialOf(const grpc::ServerContextBase& context,
                        absl::string_view front_identity) {
  Credential credential;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    absl::string_view value(it->second.data(), it->second.size());
    if (!absl::ConsumePrefix(&value, "Bearer ")) {
      credential.kind = Credential::Kind::kMalformedToken;
      return credential;
    }
    credential.kind = Credential::Kind::kToken;
    credential.id = Sha256Hex(value);
    return credential;
  }
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return credential;
  for (const grpc::string_ref& name : auth->GetPeerIdentity()) {
    if (name != kAgentMarker) {
      credential.kind = Credential::Kind::kCertificate;
      credential.id.assign(name.data(), name.size());
      break;
    }
  }
  if (credential.kind != Credential::Kind::kCertificate) return credential;
  if (!front_identity.empty() && credential.id == front_identity) {
    // The front's own certificate names nobody: the client certificate it
    // verified does, checked by the same rules as one presented here.
    credential = Credential{};
    auto name = metadata.find(kFrontClientCertHeader);
    if (name == metadata.end() || name->second.size() == 0) return credential;
    credential.kind = Credential::Kind::kCertificate;
    credential.id.assign(name->second.data(), name->second.size());
    if (auto der = metadata.find(kFrontClientCertDerHeader);
        der != metadata.end()) {
      absl::StatusOr<ClientCert> cert = InspectClientCertBase64Der(
          absl::string_view(der->second.data(), der->second.size()));
      if (cert.ok()) credential.cert = *std::move(cert);
    }
    return credential;
  }
  for (const grpc::string_ref& pem :
       auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
    absl::StatusOr<ClientCert> cert =
        InspectClientCert(absl::string_view(pem.data(), pem.size()));
    if (cert.ok()) credential.cert = *std::move(cert);
  }
  return credential;
}

namespace {

// The principal a client certificate names: refused when revoked or not
// for clients; the role the tokens file gives its identity, or else agent,
// which needs the agent marker (client_cert.h).
absl::StatusOr<Principal> IdentifyCertificate(const Credential& credential,
                                              const TokenTable& table,
                                              const RevokedCerts& revoked) {
  if (revoked.Contains(credential.cert)) {
    return WithErrorInfo(
        absl::UnauthenticatedError(absl::StrCat(
            "client certificate of '", credential.id,
            "' is revoked (--revoked_certs; see docs/security.md)")),
        kReasonCertificateRefused, {{"principal", credential.id}});
  }
  if (!credential.cert.client_auth) {
    return WithErrorInfo(
        absl::UnauthenticatedError(absl::StrCat(
            "client certificate of '", credential.id,
            "' lacks the clientAuth extended key usage (tools/make_certs.sh "
            "issues agent certificates)")),
        kReasonCertificateRefused, {{"principal", credential.id}});
  }
  auto role = table.cert_roles.find(credential.id);
  if (role != table.cert_roles.end()) {
    return Principal{credential.id, role->second};
  }
  if (!credential.cert.agent) {
    return WithErrorInfo(
        absl::UnauthenticatedError(
            absl::StrCat("client certificate of '", credential.id,
                         "' is not an agent certificate: it lacks the URI SAN ",
                         kAgentMarker, " (tools/make_certs.sh sets it)")),
        kReasonCertificateRefused, {{"principal", credential.id}});
  }
  return Principal{credential.id, Role::kAgent};
}

// The principal `credential` names in `grants`.
absl::StatusOr<Principal> Identify(const Credential& credential,
                                   const TokenTable& table,
                                   const RevokedCerts& revoked) {
  switch (credential.kind) {
    case Credential::Kind::kMalformedToken:
      return WithErrorInfo(
          absl::UnauthenticatedError("authorization: expected 'Bearer TOKEN'"),
          kReasonTokenInvalid);
    case Credential::Kind::kToken: {
      auto found = table.by_hash.find(credential.id);
      if (found == table.by_hash.end()) {
        return WithErrorInfo(
            absl::UnauthenticatedError(
                "authorization: unknown token (see docs/security.md)"),
            kReasonTokenInvalid);
      }
      return found->second;
    }
    case Credential::Kind::kCertificate:
      return IdentifyCertificate(credential, table, revoked);
    case Credential::Kind::kNone:
      break;
  }
  return WithErrorInfo(
      absl::UnauthenticatedError(
          "no credentials: send 'authorization: Bearer TOKEN' metadata "
          "(--token_file) or a client certificate (--tls_cert)"),
      kReasonCredentialsMissing);
}

// `principal` if its role may call `method`.
absl::StatusOr<Principal> Permit(Principal principal,
                                 absl::string_view method) {
  const MethodRow* row = FindMethod(method);
  if (row == nullptr) {
    return WithErrorInfo(absl::PermissionDeniedError(
                             absl::StrCat(method, ": no role may call it")),
                         kReasonRoleForbidden,
                         {{"principal", principal.name},
                          {"role", std::string(RoleName(principal.role))},
                          {"method", std::string(method)}});
  }
  for (Role role : row->roles) {
    if (role == principal.role) return principal;
  }
  return WithErrorInfo(absl::PermissionDeniedError(absl::StrCat(
                           "'", principal.name, "' (role ",
                           RoleName(principal.role), ") may not call ", method,
                           "; roles allowed: ", RoleList(row->roles))),
                       kReasonRoleForbidden,
                       {{"principal", principal.name},
                        {"role", std::string(RoleName(principal.role))},
                        {"method", std::string(method)}});
}

}  // namespace

absl::StatusOr<Principal> Authorizer::Authorize(
    const grpc::ServerContextBase& context, absl::string_view method) const {
  absl::StatusOr<Principal> principal =
      Authorize(CredentialOf(context, options_.front_identity), method);
  if (!principal.ok())
    refusals_.Note(context.peer(), method, principal.status());
  return principal;
}

absl::StatusOr<Authorizer::StreamGrant> Authorizer::AuthorizeStream(
    const grpc::ServerContextBase& context, absl::string_view method,
    std::function<void()> revoke) const {
  absl::StatusOr<StreamGrant> grant =
      AuthorizeStream(CredentialOf(context, options_.front_identity), method,
                      std::move(revoke));
  if (!grant.ok()) refusals_.Note(context.peer(), method, grant.status());
  return grant;
}

absl::StatusOr<Principal> Authorizer::Authorize(
    const Credential& credential, absl::string_view method) const {
  if (!options_.required) return Principal{"anonymous", Role::kAdmin};
  std::shared_ptr<const Grants> now = grants();
  CTXSEL_ASSIGN_OR_RETURN(Principal principal,
                          Identify(credential, now->tokens, now->revoked));
  return Permit(std::move(principal), method);
}

absl::StatusOr<Authorizer::StreamGrant> Authorizer::AuthorizeStream(
    const Credential& credential, absl::string_view method,
    std::function<void()> revoke) const {
  CTXSEL_ASSIGN_OR_RETURN(Principal principal, Authorize(credential, method));
  CTXSEL_ASSIGN_OR_RETURN(PrincipalLimits::Stream stream,
                          limits_.OpenStream(principal.name));
  // Without authentication there is nothing a reload could revoke.
  if (!options_.required) {
    return StreamGrant(nullptr, 0, std::move(principal), std::move(stream));
  }
  absl::MutexLock lock(&streams_mu_);
  const int64_t id = next_stream_id_++;
  streams_.emplace(id, OpenStream{credential, std::string(method), principal,
                                  std::move(revoke)});
  return StreamGrant(this, id, std::move(principal), std::move(stream));
}

int Authorizer::RevokeStreams(const Grants& grants) const {
  absl::MutexLock lock(&streams_mu_);
  int revoked = 0;
  for (auto& [id, stream] : streams_) {
    if (stream.revoked) continue;
    absl::StatusOr<Principal> now =
        Identify(stream.credential, grants.tokens, grants.revoked);
    if (now.ok()) now = Permit(*std::move(now), stream.method);
    if (now.ok() && now->name == stream.principal.name &&
        now->role == stream.principal.role) {
      continue;
    }
    stream.revoked = true;
    if (stream.revoke) stream.revoke();
    ++revoked;
  }
  return revoked;
}

void Authorizer::CloseStream(int64_t id) const {
  absl::MutexLock lock(&streams_mu_);
  streams_.erase(id);
}

Authorizer::StreamGrant::~StreamGrant() {
  if (authorizer_ != nullptr) authorizer_->CloseStream(id_);
}

absl::Status Authorizer::CheckNode(const Principal& principal,
                                   absl::string_view node) {
  if (principal.role != Role::kAgent || principal.name == node) {
    return absl::OkStatus();
  }
  return WithErrorInfo(
      absl::PermissionDeniedError(
          absl::StrCat("node: agent '", principal.name,
                       "' may act only for its own node, not '", node, "'")),
      kReasonNodeIdentityMismatch,
      {{"principal", principal.name}, {"node", std::string(node)}});
}

bool Authorizer::MayActFor(const Principal& principal,
                           absl::string_view owner) {
  return principal.role == Role::kAdmin || principal.name == owner;
}

}  // namespace ctxsel::server
