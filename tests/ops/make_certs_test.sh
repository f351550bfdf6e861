#!/usr/bin/env bash
# tools/make_certs.sh run again on its directory: it keeps the CA (same
# fingerprint), keeps the certificates it issued (they still verify), issues
# the nodes it is given, renews what expires within --renew-within days or
# everything with --renew, and refuses a directory with half a CA.
set -euo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
MAKE_CERTS="$R/tools/make_certs.sh"
T="$(mktemp -d "$TEST_TMPDIR/certs.XXXXXX")"
fail() { echo "FAIL: $*" >&2; exit 1; }
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256; }
verifies() { openssl verify -CAfile "$T/pki/ca.pem" "$T/pki/$1.pem" >/dev/null 2>&1 || fail "$1.pem does not verify against ca.pem"; }

bash "$MAKE_CERTS" "$T/pki" n1 >"$T/first.out" || fail "first run: $(cat "$T/first.out")"
grep -q "^issued CA $T/pki/ca.pem" "$T/first.out" || fail "$(cat "$T/first.out")"
ca="$(fp "$T/pki/ca.pem")"
n1="$(fp "$T/pki/n1.pem")"
cp "$T/pki/server.pem" "$T/server.pem.first"

# A second run that adds a node: the CA and the old certificates stay.
bash "$MAKE_CERTS" "$T/pki" n2 >"$T/second.out" || fail "second run: $(cat "$T/second.out")"
[[ "$(fp "$T/pki/ca.pem")" == "$ca" ]] || fail "the CA changed on a second run"
grep -q "^kept CA $T/pki/ca.pem" "$T/second.out" || fail "$(cat "$T/second.out")"
grep -q "^kept $T/pki/n1.pem" "$T/second.out" || fail "$(cat "$T/second.out")"
grep -q "^issued $T/pki/n2.pem" "$T/second.out" || fail "$(cat "$T/second.out")"
[[ "$(fp "$T/pki/n1.pem")" == "$n1" ]] || fail "n1.pem was re-issued"
cmp -s "$T/pki/server.pem" "$T/server.pem.first" || fail "server.pem was re-issued"
for name in server n1 n2; do verifies "$name"; done
# Files the first run made still verify against the CA of the second.
openssl verify -CAfile "$T/pki/ca.pem" "$T/server.pem.first" >/dev/null || fail "the first server.pem no longer verifies"
openssl x509 -in "$T/pki/n2.pem" -noout -ext subjectAltName | grep -q 'DNS:n2' || fail "n2.pem lacks DNS:n2"
[[ "$(stat -c %a "$T/pki/n2.key")" == 600 ]] || fail "n2.key is not 0600"
# Agent certificates: clientAuth and the agent marker; the server's has
# neither, so the server refuses it as an agent.
for name in n1 n2; do
  openssl x509 -in "$T/pki/$name.pem" -noout -ext subjectAltName | grep -q 'URI:ctxsel:role:agent' || fail "$name.pem lacks the agent marker"
  openssl x509 -in "$T/pki/$name.pem" -noout -ext extendedKeyUsage | grep -q 'TLS Web Client Authentication' || fail "$name.pem lacks clientAuth"
done
! openssl x509 -in "$T/pki/server.pem" -noout -ext subjectAltName | grep -q 'ctxsel:role:agent' || fail "server.pem carries the agent marker"
# A node certificate issued before the marker existed is re-issued with it
# (same key, same names plus the marker).
openssl req -new -key "$T/pki/n2.key" -subj /CN=n2 -out "$T/old.csr" 2>/dev/null
printf 'subjectAltName=DNS:n2\nbasicConstraints=CA:FALSE\n' >"$T/old.ext"
openssl x509 -req -in "$T/old.csr" -CA "$T/pki/ca.pem" -CAkey "$T/pki/ca.key" -CAcreateserial -days 90 -extfile "$T/old.ext" -out "$T/pki/n2.pem" 2>/dev/null
bash "$MAKE_CERTS" "$T/pki" >"$T/marker.out" || fail "marker run: $(cat "$T/marker.out")"
grep -q "^renewed $T/pki/n2.pem (its names were DNS:n2)" "$T/marker.out" || fail "old n2 not renewed: $(cat "$T/marker.out")"
openssl x509 -in "$T/pki/n2.pem" -noout -ext subjectAltName | grep -q 'DNS:n2, URI:ctxsel:role:agent' || fail "renewed n2.pem lacks its name or the marker"
grep -q "^kept $T/pki/n1.pem" "$T/marker.out" || fail "$(cat "$T/marker.out")"

# A certificate that expires within --renew-within days is renewed from the
# same CA with the same key; the others are kept.
bash "$MAKE_CERTS" --days=2 "$T/pki" n3 >/dev/null
key3="$(openssl pkey -in "$T/pki/n3.key" -pubout)"
bash "$MAKE_CERTS" "$T/pki" >"$T/third.out" || fail "third run: $(cat "$T/third.out")"
grep -q "^renewed $T/pki/n3.pem (it expires within 7 days)" "$T/third.out" || fail "n3 not renewed: $(cat "$T/third.out")"
grep -q "^kept $T/pki/n1.pem" "$T/third.out" || fail "$(cat "$T/third.out")"
openssl x509 -in "$T/pki/n3.pem" -noout -checkend $((30 * 86400)) >/dev/null || fail "the renewed n3.pem expires within 30 days"
[[ "$(openssl x509 -in "$T/pki/n3.pem" -noout -pubkey)" == "$key3" ]] || fail "n3 got a new key"
[[ "$(fp "$T/pki/ca.pem")" == "$ca" ]] || fail "the CA changed on renewal"
verifies n3
# --renew-within=0 keeps it; --renew re-issues everything.
bash "$MAKE_CERTS" --days=2 --renew "$T/pki" >"$T/renew.out"
grep -q "^renewed $T/pki/n1.pem (--renew)" "$T/renew.out" || fail "$(cat "$T/renew.out")"
bash "$MAKE_CERTS" --renew-within=0 "$T/pki" >"$T/keep.out"
grep -q "^kept $T/pki/n1.pem" "$T/keep.out" || fail "$(cat "$T/keep.out")"
[[ "$(fp "$T/pki/ca.pem")" == "$ca" ]] || fail "the CA changed on --renew"
for name in server n1 n2 n3; do verifies "$name"; done

# Half a CA: an error, never a new CA.
mv "$T/pki/ca.key" "$T/ca.key.away"
set +e
bash "$MAKE_CERTS" "$T/pki" n4 >"$T/half.out" 2>"$T/half.err"
code=$?
set -e
[[ $code -ne 0 ]] || fail "a directory without ca.key made certificates"
[[ ! -e "$T/pki/n4.pem" ]] || fail "n4.pem made without the CA key"
[[ "$(fp "$T/pki/ca.pem")" == "$ca" ]] || fail "ca.pem replaced"
grep -q 'only one of ca.pem and ca.key' "$T/half.err" || fail "$(cat "$T/half.err")"
# A usage error exits 2.
set +e
bash "$MAKE_CERTS" --renew-within=soon "$T/pki" 2>/dev/null
code=$?
set -e
[[ $code -eq 2 ]] || fail "--renew-within=soon exited $code, want 2"
echo PASS
