// client_cert.h: what the server reads from a verified client certificate
// beyond its name: whether it is meant for clients, whether it is an agent's,
// and its fingerprint, for the deny list (--revoked_certs,
// docs/security.md).
//
// An agent certificate carries the clientAuth extended key usage and the URI
// SAN kAgentMarker, which tools/make_certs.sh sets on every node
// certificate and never on the server's: the CA signs both, and without the
// marker the server's own certificate would pass as an agent.
//
//   absl::StatusOr<ClientCert> cert = InspectClientCert(pem);
//   if (cert.ok() && cert->agent) ...
#ifndef CTXSEL_SERVER_ACCESS_CLIENT_CERT_H_
#define CTXSEL_SERVER_ACCESS_CLIENT_CERT_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel::server {

// The URI SAN that marks an agent certificate.
inline constexpr char kAgentMarker[] = "ctxsel:role:agent";

struct ClientCert {
  // SHA-256 of the DER certificate, lowercase hex without colons.
  std::string fingerprint;
  // Its subject CN and every SAN (DNS, IP, URI, email), the marker included.
  std::vector<std::string> names;
  // It has the extendedKeyUsage extension with clientAuth (a certificate
  // without the extension is not taken as a client's).
  bool client_auth = false;
  // client_auth and the kAgentMarker URI SAN.
  bool agent = false;
};

// Reads the PEM certificate `pem` (gRPC's x509_pem_cert peer property).
// InvalidArgumentError when it does not parse.
absl::StatusOr<ClientCert> InspectClientCert(absl::string_view pem);
// The same for a DER certificate in base64 (as the front forwards it:
// kFrontClientCertDerHeader in auth.h).
absl::StatusOr<ClientCert> InspectClientCertBase64Der(
    absl::string_view base64_der);

// The deny list of --revoked_certs: one entry a line, '#' comments:
//   sha256 AB:CD:...   a certificate's SHA-256 fingerprint (64 hex digits,
//                      colons and case as `openssl x509 -fingerprint
//                      -sha256` prints them, or not)
//   name NODE          every certificate with NODE as CN or SAN
struct RevokedCerts {
  std::set<std::string> fingerprints;  // lowercase hex, no colons
  std::set<std::string> names;
  // Whether `cert` is on the list.
  bool Contains(const ClientCert& cert) const;
  size_t size() const { return fingerprints.size() + names.size(); }
};
// Parses the text of a --revoked_certs file (`path` for messages):
// InvalidArgumentError naming the line otherwise.
absl::StatusOr<RevokedCerts> ParseRevokedCerts(absl::string_view text,
                                               absl::string_view path);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_ACCESS_CLIENT_CERT_H_
