#include "server/access/client_cert.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ctxsel::server {
namespace {

struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct NamesFree {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};

std::string Text(const ASN1_STRING* text) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                     ASN1_STRING_length(text));
}

// SHA-256 hex without colons, lowercase; empty unless 64 hex digits.
std::string NormalizeFingerprint(absl::string_view text) {
  std::string hex =
      absl::AsciiStrToLower(absl::StrReplaceAll(text, {{":", ""}}));
  if (hex.size() != 64) return "";
  for (char c : hex) {
    if (!absl::ascii_isxdigit(c)) return "";
  }
  return hex;
}

}  // namespace

absl::StatusOr<ClientCert> InspectClientCert(absl::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<X509, X509Free> cert(
      bio == nullptr ? nullptr
                     : PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError("client certificate: not PEM X.509");
  }
  ClientCert out;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (X509_digest(cert.get(), EVP_sha256(), digest, &length) == 1) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < length; ++i) {
      out.fingerprint.push_back(kHex[digest[i] >> 4]);
      out.fingerprint.push_back(kHex[digest[i] & 0xf]);
    }
  }
  const X509_NAME* subject = X509_get_subject_name(cert.get());
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    out.names.push_back(
        Text(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i))));
  }
  bool marked = false;
  std::unique_ptr<GENERAL_NAMES, NamesFree> sans(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans.get(), i);
    switch (name->type) {
      case GEN_DNS:
      case GEN_EMAIL:
        out.names.push_back(Text(name->d.ia5));
        break;
      case GEN_URI:
        out.names.push_back(Text(name->d.uniformResourceIdentifier));
        marked = marked || out.names.back() == kAgentMarker;
        break;
      default:
        break;
    }
  }
  // X509_get_extension_flags fills the cached extension data first.
  out.client_auth =
      (X509_get_extension_flags(cert.get()) & EXFLAG_XKUSAGE) != 0 &&
      (X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT) != 0;
  out.agent = out.client_auth && marked;
  return out;
}

bool RevokedCerts::Contains(const ClientCert& cert) const {
  if (fingerprints.count(cert.fingerprint) > 0) return true;
  for (const std::string& name : cert.names) {
    if (name != kAgentMarker && names.count(name) > 0) return true;
  }
  return false;
}

absl::StatusOr<RevokedCerts> ParseRevokedCerts(absl::string_view text,
                                               absl::string_view path) {
  RevokedCerts revoked;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    std::string fingerprint;
    if (fields.size() == 2 && fields[0] == "sha256" &&
        !(fingerprint = NormalizeFingerprint(fields[1])).empty()) {
      revoked.fingerprints.insert(fingerprint);
    } else if (fields.size() == 2 && fields[0] == "name") {
      revoked.names.insert(std::string(fields[1]));
    } else {
      // The line itself is not repeated: it is the operator's own, but a
      // message should not carry file contents.
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", number,
          ": want 'sha256 FINGERPRINT' (64 hex digits) or 'name NAME'"));
    }
  }
  return revoked;
}

absl::StatusOr<ClientCert> InspectClientCertBase64Der(
    absl::string_view base64_der) {
  std::string der;
  if (!absl::Base64Unescape(base64_der, &der) || der.empty()) {
    return absl::InvalidArgumentError("the certificate is not base64");
  }
  // PEM is the base64 in lines of 64 between the markers.
  const std::string base64 = absl::Base64Escape(der);
  std::string pem = "-----BEGIN CERTIFICATE-----\n";
  for (size_t i = 0; i < base64.size(); i += 64) {
    absl::StrAppend(&pem, base64.substr(i, 64), "\n");
  }
  absl::StrAppend(&pem, "-----END CERTIFICATE-----\n");
  return InspectClientCert(pem);
}

}  // namespace ctxsel::server
