#!/usr/bin/env bash
# tools/make_certs.sh DIR [NODE...]: a fresh CA and the certificates a ctxsel
# fleet needs, with openssl, into DIR (docs/security.md):
#   DIR/ca.pem, ca.key          the CA (--ca for clients, --client_ca for the server)
#   DIR/server.pem, server.key  for $SERVER_SAN (--tls_cert, --tls_key); default
#                               DNS:localhost,IP:127.0.0.1
#   DIR/NODE.pem, NODE.key      one client certificate per agent; SAN DNS:NODE
# Keys are P-256 and readable by the owner only. For demos and tests; a real
# fleet issues from its own CA the same way (docs/security.md).
set -euo pipefail
(( $# >= 1 )) || { echo "usage: $0 DIR [NODE...]" >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir"
umask 077

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# issue NAME CN SAN: NAME.pem signed by the CA.
issue() {
  key "$dir/$1.key"
  openssl req -new -key "$dir/$1.key" -subj "/CN=$2" -out "$dir/$1.csr"
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$3" >"$dir/$1.ext"
  openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 30 -extfile "$dir/$1.ext" -out "$dir/$1.pem" 2>/dev/null
  rm -f "$dir/$1.csr" "$dir/$1.ext"
}

key "$dir/ca.key"
openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=ctxsel CA" -days 30 \
  -out "$dir/ca.pem"
issue server server "${SERVER_SAN:-DNS:localhost,IP:127.0.0.1}"
for node in "$@"; do
  issue "$node" "$node" "DNS:$node"
done
