#!/usr/bin/env bash
# tools/make_certs.sh [--renew-within=DAYS] [--renew] [--days=DAYS] DIR [NODE...]:
# the CA and the certificates a ctxsel fleet needs, with openssl, in DIR
# (docs/security.md):
#   DIR/ca.pem, ca.key          the CA (--ca for clients, --client_ca for the server)
#   DIR/server.pem, server.key  for $SERVER_SAN (--tls_cert, --tls_key); default
#                               DNS:localhost,IP:127.0.0.1
#   DIR/NODE.pem, NODE.key      one client certificate per agent: SAN DNS:NODE and
#                               the agent marker URI:ctxsel:role:agent, extended
#                               key usage clientAuth (the server accepts no
#                               other certificate as an agent's)
# Run it again to add nodes or renew: an existing CA is kept (never replaced:
# a DIR with only half of one is an error), a certificate DIR already holds is
# kept while it verifies against the CA and lasts more than --renew-within
# days (default 7), and re-issued from the CA with its own key and names
# otherwise (an agent certificate also when it lacks the marker or
# clientAuth), or for every certificate with --renew; missing ones are issued.
# New certificates last --days (default 90), the CA 10 years. One line per
# file says what was done (kept, issued, renewed). Keys are P-256 and
# readable by the owner only. For demos and tests; a real fleet issues from
# its own CA the same way (docs/security.md).
set -euo pipefail
usage() {
  echo "usage: $0 [--renew-within=DAYS] [--renew] [--days=DAYS] DIR [NODE...]" >&2
  exit 2
}
renew_within=7
renew_all=0
days=90
while (( $# > 0 )); do
  case $1 in
    --renew-within=*) renew_within=${1#*=} ;;
    --renew) renew_all=1 ;;
    --days=*) days=${1#*=} ;;
    --) shift; break ;;
    -*) echo "$0: unknown flag $1" >&2; usage ;;
    *) break ;;
  esac
  shift
done
[[ $renew_within =~ ^[0-9]+$ && $days =~ ^[1-9][0-9]*$ ]] ||
  { echo "$0: --renew-within and --days take a number of days" >&2; usage; }
(( $# >= 1 )) || usage
dir=$1
shift
for node in "$@"; do
  [[ $node =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && $node != ca && $node != server ]] ||
    { echo "$0: '$node' is not a node name" >&2; usage; }
done
umask 077
mkdir -p "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
fingerprint() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//'; }
# The SAN of certificate $1 as openssl's -extfile takes it: DNS:a,IP:127.0.0.1.
san_of() {
  openssl x509 -in "$1" -noout -ext subjectAltName 2>/dev/null |
    sed -n '2,$p' | tr -d ' ' | sed 's/IPAddress:/IP:/g'
}

# The CA: kept when DIR has one; a half CA would orphan every certificate.
if [[ -e "$dir/ca.pem" || -e "$dir/ca.key" ]]; then
  [[ -s "$dir/ca.pem" && -s "$dir/ca.key" ]] || {
    echo "$0: $dir has only one of ca.pem and ca.key; restore the other (a new CA would invalidate every certificate)" >&2
    exit 1
  }
  echo "kept CA $dir/ca.pem (SHA-256 $(fingerprint "$dir/ca.pem"))"
  if ! openssl x509 -in "$dir/ca.pem" -noout -checkend $((renew_within * 86400)) >/dev/null; then
    # Same key and name: every certificate it issued still verifies.
    openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=ctxsel CA" -days 3650 \
      -out "$dir/ca.pem.new"
    mv "$dir/ca.pem.new" "$dir/ca.pem"
    echo "renewed CA $dir/ca.pem (same key; it expires within $renew_within days)"
  fi
else
  key "$dir/ca.key"
  openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=ctxsel CA" -days 3650 \
    -out "$dir/ca.pem"
  echo "issued CA $dir/ca.pem (SHA-256 $(fingerprint "$dir/ca.pem"))"
fi

# The extended key usage of certificate $1 as openssl prints it.
eku_of() {
  openssl x509 -in "$1" -noout -ext extendedKeyUsage 2>/dev/null | sed -n '2,$p' | tr -d ' '
}

# ensure NAME CN SAN [EKU]: NAME.pem from the CA, issued, kept or renewed;
# with EKU (e.g. clientAuth) its extended key usage.
ensure() {
  local name=$1 cn=$2 san=$3 eku=${4:-} pem="$dir/$1.pem" done=renewed why=""
  if [[ ! -s "$pem" || ! -s "$dir/$name.key" ]]; then
    done=issued
  elif (( renew_all )); then
    why="--renew"
  elif ! openssl verify -CAfile "$dir/ca.pem" "$pem" >/dev/null 2>&1; then
    why="it did not verify against $dir/ca.pem"
  elif ! openssl x509 -in "$pem" -noout -checkend $((renew_within * 86400)) >/dev/null; then
    why="it expires within $renew_within days"
  elif [[ "$(san_of "$pem")" != "$san" ]]; then
    why="its names were $(san_of "$pem")"
  elif [[ $eku == clientAuth && "$(eku_of "$pem")" != "TLSWebClientAuthentication" ]]; then
    why="it lacked the clientAuth usage"
  else
    echo "kept $pem (until $(openssl x509 -in "$pem" -noout -enddate | sed 's/.*=//'))"
    return
  fi
  [[ -s "$dir/$name.key" ]] || key "$dir/$name.key"
  openssl req -new -key "$dir/$name.key" -subj "/CN=$cn" -out "$dir/$name.csr"
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$san" >"$dir/$name.ext"
  [[ -z $eku ]] || printf 'extendedKeyUsage=%s\n' "$eku" >>"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days "$days" -extfile "$dir/$name.ext" -out "$pem.new" 2>/dev/null
  mv "$pem.new" "$pem"
  rm -f "$dir/$name.csr" "$dir/$name.ext"
  echo "$done $pem${why:+ ($why)}"
}

# The server keeps its names unless $SERVER_SAN gives others.
server_san=${SERVER_SAN:-}
if [[ -z "$server_san" && -s "$dir/server.pem" ]]; then server_san="$(san_of "$dir/server.pem")"; fi
ensure server server "${server_san:-DNS:localhost,IP:127.0.0.1}"
# Every node named now, and every certificate issued before (renewed when
# due, with the names it has).
nodes=("$@")
for pem in "$dir"/*.pem; do
  name=$(basename "$pem" .pem)
  [[ $name == ca || $name == server || ! -s "$dir/$name.key" ]] || nodes+=("$name")
done
# Agent certificates carry the marker; one issued before it gets it.
marker=URI:ctxsel:role:agent
for node in $(printf '%s\n' ${nodes[@]+"${nodes[@]}"} | sort -u); do
  san="DNS:$node,$marker"
  if [[ -s "$dir/$node.pem" ]]; then
    san="$(san_of "$dir/$node.pem")"
    [[ ",$san," == *",$marker,"* ]] || san="$san,$marker"
  fi
  ensure "$node" "$node" "$san" clientAuth
done
