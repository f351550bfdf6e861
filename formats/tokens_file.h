// tokens_file.h: roles, tokens and the tokens file, the format that
// `ctxsel-cli admin token` writes a line of and the server reads
// (docs/security.md).
//
//   const std::string token = NewToken();            // "ctx_" + 64 hex
//   std::string line = TokenLine(Role::kLauncher, "slurm", token);
//   // "launcher slurm <sha256 of token>", for the server's --tokens_file
//   absl::StatusOr<TokenTable> table = ParseTokens(file_text, "tokens");
#ifndef CTXSEL_FORMATS_TOKENS_FILE_H_
#define CTXSEL_FORMATS_TOKENS_FILE_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel {

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

// The tokens-file line for `token` ("ROLE NAME SHA256").
std::string TokenLine(Role role, absl::string_view name,
                      absl::string_view token);

// A cap on claims (server/claims/claims.h, ClaimQuota): live claims at
// once, and device-hours their live claims hold; 0: no cap.
struct ClaimLimits {
  int max_claims = 0;
  double max_device_hours = 0;
};

// One parsed tokens file. Lines: "ROLE NAME SHA256HEX" (a bearer token) or
// "ROLE NAME cert" (a client certificate whose identity is NAME has ROLE;
// without such a line a verified certificate is an agent for node NAME),
// either followed by claim caps for principal NAME, "max_claims=N" and
// "max_device_hours=H" (docs/security.md, "Claim quotas"); "quota
// holder_prefix=PREFIX max_claims=N max_device_hours=H" caps the claims
// whose holder starts with PREFIX, whoever made them; '#' starts a comment.
// Errors name the line: InvalidArgumentError.
struct TokenTable {
  std::map<std::string, Principal> by_hash;  // SHA-256 hex -> principal
  std::map<std::string, Role> cert_roles;    // certificate identity -> role
  // Principal name -> its caps (the last line naming it that gives some).
  std::map<std::string, ClaimLimits> principal_limits;
  // Holder prefix -> its caps.
  std::map<std::string, ClaimLimits> holder_limits;
};
absl::StatusOr<TokenTable> ParseTokens(absl::string_view text,
                                       absl::string_view file_name);

}  // namespace ctxsel

#endif  // CTXSEL_FORMATS_TOKENS_FILE_H_
