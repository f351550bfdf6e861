#include "formats/tokens_file.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ctxsel {
namespace {

struct RoleRow {
  Role role;
  absl::string_view name;
};
constexpr RoleRow kRoles[] = {
    {Role::kAdmin, "admin"},
    {Role::kAgent, "agent"},
    {Role::kLauncher, "launcher"},
    {Role::kReader, "reader"},
};

bool IsSha256Hex(absl::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

// Reads "max_claims=N" and "max_device_hours=H" from `options` into
// `limits`; `holder_prefix` (null: not allowed) takes "holder_prefix=P".
absl::Status ParseLimits(const std::vector<absl::string_view>& options,
                         const std::string& where, ClaimLimits& limits,
                         std::string* holder_prefix) {
  for (absl::string_view option : options) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(option, absl::MaxSplits('=', 1));
    bool ok = false;
    if (kv.first == "max_claims") {
      ok = absl::SimpleAtoi(kv.second, &limits.max_claims) &&
           limits.max_claims >= 0;
    } else if (kv.first == "max_device_hours") {
      ok = absl::SimpleAtod(kv.second, &limits.max_device_hours) &&
           limits.max_device_hours >= 0;
    } else if (kv.first == "holder_prefix" && holder_prefix != nullptr) {
      *holder_prefix = std::string(kv.second);
      ok = !holder_prefix->empty();
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "'", option, "': expected max_claims=N or max_device_hours=H",
          holder_prefix != nullptr ? " (and holder_prefix=PREFIX)" : "",
          ", not negative"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view RoleName(Role role) {
  for (const RoleRow& row : kRoles) {
    if (row.role == role) return row.name;
  }
  return "unknown";
}

absl::StatusOr<Role> RoleFromName(absl::string_view name) {
  for (const RoleRow& row : kRoles) {
    if (row.name == name) return row.role;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "role: '", name, "' is not one of admin, agent, launcher, reader"));
}

std::string Sha256Hex(absl::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

std::string NewToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();  // no entropy
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token = "ctx_";
  for (unsigned char b : bytes) {
    token.push_back(kHex[b >> 4]);
    token.push_back(kHex[b & 15]);
  }
  return token;
}

std::string TokenLine(Role role, absl::string_view name,
                      absl::string_view token) {
  return absl::StrCat(RoleName(role), " ", name, " ", Sha256Hex(token));
}

absl::StatusOr<TokenTable> ParseTokens(absl::string_view text,
                                       absl::string_view file_name) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    const std::string where = absl::StrCat(file_name, ":", line_number, ": ");
    if (fields[0] == "quota") {
      ClaimLimits limits;
      std::string prefix;
      if (absl::Status s = ParseLimits({fields.begin() + 1, fields.end()},
                                       where, limits, &prefix);
          !s.ok()) {
        return s;
      }
      if (prefix.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "a quota line needs holder_prefix=PREFIX"));
      }
      table.holder_limits[prefix] = limits;
      continue;
    }
    if (fields.size() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(where,
                       "expected 'ROLE NAME SHA256' or 'ROLE NAME "
                       "cert' (then caps, key=value), found ",
                       fields.size(), " field(s)"));
    }
    absl::StatusOr<Role> role = RoleFromName(fields[0]);
    if (!role.ok()) {
      // Not echoed either: a token pasted over the role must not reach a log.
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          "role: the first field is not one of admin, agent, launcher, "
          "reader"));
    }
    const std::string name(fields[1]);
    if (fields.size() > 3) {
      ClaimLimits& limits = table.principal_limits[name];
      if (absl::Status s = ParseLimits({fields.begin() + 3, fields.end()},
                                       where, limits, nullptr);
          !s.ok()) {
        return s;
      }
    }
    if (fields[2] == "cert") {
      table.cert_roles[name] = *role;
      continue;
    }
    if (!IsSha256Hex(fields[2])) {
      // Not echoed: a token pasted here by mistake must not reach a log.
      return absl::InvalidArgumentError(
          absl::StrCat(where,
                       "the third field is neither 'cert' nor 64 lowercase hex "
                       "digits (the token's SHA-256, not the token)"));
    }
    if (!table.by_hash.emplace(std::string(fields[2]), Principal{name, *role})
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "the same token hash appears twice"));
    }
  }
  return table;
}

}  // namespace ctxsel
