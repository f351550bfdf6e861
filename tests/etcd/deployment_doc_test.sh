#!/usr/bin/env bash
# Runs docs/deployment.md's "Securing etcd" on loopback: checks that the page
# shows each command as written here, then runs it with the page's hosts,
# ports and paths replaced by this test's: make_certs.sh for etcd, one etcd
# member from the page's configuration file (TLS on its client and peer
# ports, client certificates), the etcdctl commands that turn
# authentication on, the replica's --check_config, and a replica started
# with the flags of the shipped systemd drop-in (whose LoadCredential lines
# it checks). Then checks what the page and docs/security.md claim etcd
# refuses: plaintext, a handshake without a certificate, the replicas'
# certificate without the password, and the replicas' user outside its
# prefix.
set -euo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
T="$(mktemp -d "$TEST_TMPDIR/deployment.XXXXXX")"
DOC="$R/docs/deployment.md"
SERVER="$R/server/ctxsel-server"
CLI="$R/client/cli/ctxsel-cli"
DROPIN="$R/tools/systemd/ctxsel-server.service.d/etcd.conf"
pids=()
cleanup() {
  for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The page shows `command` verbatim.
shown() { grep -qF -- "$1" "$DOC" || fail "docs/deployment.md does not show: $1"; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
client_port=$(free_port)
peer_port=$(free_port)
# The page's hosts, ports and paths -> this test's (every member is the one
# member here).
loopback() {
  sed -e "s|10\.0\.0\.1[123]:2379|127.0.0.1:$client_port|g" \
    -e "s|10\.0\.0\.1[123]:2380|127.0.0.1:$peer_port|g" \
    -e "s|IP:10\.0\.0\.1[123]|IP:127.0.0.1|g" \
    -e "s|/etc/etcd/|$T/etcd/|g; s|/etc/ctxsel/|$T/ctxsel/|g; s|%d/|$T/ctxsel/|g" \
    -e "s|/var/lib/etcd|$T/etcd/data|g; s|/var/lib/ctxsel|$T/data|g" \
    -e "s|0\.0\.0\.0:7070|127.0.0.1:0|; s|127\.0\.0\.1:9464|127.0.0.1:0|" \
    -e "s|tools/make_certs.sh|bash $R/tools/make_certs.sh|"
}
# Shown on the page, then run here (in this shell: `export` and `umask`
# carry over to the commands after it).
run() {
  shown "$1"
  local command
  command="$(loopback <<<"$1")"
  eval "$command" >>"$T/commands.log" 2>&1 ||
    fail "$1 (here: $command): $(tail -5 "$T/commands.log")"
}
mkdir -p "$T/etcd" "$T/ctxsel" "$T/data"

# --- Certificates ------------------------------------------------------------
run 'SERVER_SAN=DNS:etcd-1,DNS:etcd-2,DNS:etcd-3,IP:10.0.0.11,IP:10.0.0.12,IP:10.0.0.13 tools/make_certs.sh /etc/etcd/pki ctxsel-replica root'

# --- One member, from the page's configuration file --------------------------
awk '/^```yaml$/ { f = 1; next } /^```$/ { f = 0 } f' "$DOC" | loopback |
  sed "s|^initial-cluster: .*|initial-cluster: etcd-1=https://127.0.0.1:$peer_port|" \
    >"$T/etcd/etcd.yml"
grep -q '^  client-cert-auth: true$' "$T/etcd/etcd.yml" || fail "the page's etcd.yml asks no client certificate"
grep -q "^listen-client-urls: https://" "$T/etcd/etcd.yml" || fail "the page's etcd.yml serves no TLS"
etcd --config-file="$T/etcd/etcd.yml" >"$T/etcd.log" 2>&1 &
pids+=($!)
pki="$T/etcd/pki"
# etcdctl with only the flags given here (etcd 3.4's refuses a flag that an
# exported ETCDCTL_ variable also sets).
ctl() {
  env -u ETCDCTL_ENDPOINTS -u ETCDCTL_CACERT -u ETCDCTL_CERT -u ETCDCTL_KEY \
    etcdctl --endpoints="https://127.0.0.1:$client_port" --dial-timeout=1s --command-timeout=3s "$@"
}
as_root=(ctl --cacert="$pki/ca.pem" --cert="$pki/root.pem" --key="$pki/root.key")
as_replica=(ctl --cacert="$pki/ca.pem" --cert="$pki/ctxsel-replica.pem" --key="$pki/ctxsel-replica.key")
for _ in $(seq 100); do
  "${as_root[@]}" endpoint health >/dev/null 2>&1 && break
  sleep 0.2
done
"${as_root[@]}" endpoint health >/dev/null 2>&1 || fail "etcd did not start: $(tail -20 "$T/etcd.log")"

# --- Users -------------------------------------------------------------------
run 'umask 077; openssl rand -base64 24 >/etc/etcd/root.password; openssl rand -base64 24 >/etc/ctxsel/etcd.password'
run 'export ETCDCTL_ENDPOINTS=https://10.0.0.11:2379 ETCDCTL_CACERT=/etc/etcd/pki/ca.pem ETCDCTL_CERT=/etc/etcd/pki/root.pem ETCDCTL_KEY=/etc/etcd/pki/root.key'
run 'etcdctl user add root --interactive=false </etc/etcd/root.password'
run 'etcdctl user grant-role root root'
run 'etcdctl role add ctxsel'
run 'etcdctl role grant-permission ctxsel readwrite /ctxsel/ --prefix=true'
run 'etcdctl user add ctxsel --interactive=false </etc/ctxsel/etcd.password'
run 'etcdctl user grant-role ctxsel ctxsel'
run 'etcdctl auth enable'

# --- What etcd now refuses (docs/security.md, "An attacker at etcd") ---------
refused() {  # refused WHAT WHY COMMAND...: the command fails, saying WHY
  local what=$1 why=$2
  shift 2
  if "$@" >"$T/refused.out" 2>&1; then fail "etcd accepted $what: $(cat "$T/refused.out")"; fi
  grep -q -- "$why" "$T/refused.out" || fail "$what: not '$why': $(cat "$T/refused.out")"
}
refused "plaintext" "deadline exceeded" \
  env -u ETCDCTL_ENDPOINTS -u ETCDCTL_CACERT -u ETCDCTL_CERT -u ETCDCTL_KEY \
  etcdctl --endpoints="http://127.0.0.1:$client_port" --dial-timeout=1s --command-timeout=2s get /ctxsel/ --prefix
refused "a handshake without a client certificate" "deadline exceeded" \
  ctl --cacert="$pki/ca.pem" get /ctxsel/ --prefix
refused "the replicas' certificate without the password" "permission denied" \
  "${as_replica[@]}" get /ctxsel/ --prefix
password="$(head -1 "$T/ctxsel/etcd.password")"
"${as_replica[@]}" --user="ctxsel:$password" put /ctxsel/probe yes >/dev/null ||
  fail "the replicas' user cannot write its prefix"
refused "the replicas' user outside its prefix" "permission denied" \
  "${as_replica[@]}" --user="ctxsel:$password" put /other yes
"${as_replica[@]}" --user="ctxsel:$password" del /ctxsel/probe >/dev/null

# --- The replica -------------------------------------------------------------
# The files the page says to copy, then the server's own (docs/security.md)
# beside them: make_certs.sh must leave the etcd ones alone.
cp "$pki/ca.pem" "$T/ctxsel/etcd.ca.pem"
cp "$pki/ctxsel-replica.pem" "$T/ctxsel/etcd.crt"
cp "$pki/ctxsel-replica.key" "$T/ctxsel/etcd.key"
bash "$R/tools/make_certs.sh" "$T/ctxsel" >"$T/certs.log" 2>&1 || fail "make_certs: $(cat "$T/certs.log")"
"$CLI" admin token --role=admin --name=ops 2>"$T/ctxsel/tokens" >"$T/ops.token" || fail "admin token"
check='ctxsel-server --check_config --store=etcd://10.0.0.11:2379,10.0.0.12:2379,10.0.0.13:2379 --etcd_ca=/etc/ctxsel/etcd.ca.pem --etcd_cert=/etc/ctxsel/etcd.crt --etcd_key=/etc/ctxsel/etcd.key --etcd_user=ctxsel --etcd_password_file=/etc/ctxsel/etcd.password --tls_cert=/etc/ctxsel/server.pem --tls_key=/etc/ctxsel/server.key --client_ca=/etc/ctxsel/ca.pem --tokens_file=/etc/ctxsel/tokens'
shown "$check"
read -r -a argv <<<"$(loopback <<<"$check")"
"$SERVER" "${argv[@]:1}" --listen=127.0.0.1:0 >"$T/check.out" 2>"$T/check.err" ||
  fail "--check_config: $(cat "$T/check.out" "$T/check.err")"
grep -q '^etcd security: TLS, etcd verified by .*, client certificate .*, etcd user ctxsel' "$T/check.out" ||
  fail "--check_config does not say how etcd is reached: $(cat "$T/check.out")"
# The check reads the files as the start would: an empty password fails it.
: >"$T/empty.password"
if "$SERVER" "${argv[@]:1}" --listen=127.0.0.1:0 --etcd_password_file="$T/empty.password" >"$T/check2.out" 2>&1; then
  fail "--check_config passed an empty --etcd_password_file"
fi
grep -q -- '--etcd_password_file: .* is empty' "$T/check2.out" || fail "$(cat "$T/check2.out")"

# --- The systemd drop-in -----------------------------------------------------
while IFS= read -r line; do
  shown "$line"
done < <(grep '^LoadCredential=' "$DROPIN")
flags_line="$(grep '^Environment="CTXSEL_SERVER_FLAGS=' "$DROPIN")"
! grep -q '/etc/ctxsel' <<<"$flags_line" || fail "the drop-in's flags read /etc/ctxsel directly"
for credential in $(grep -oE '%d/[a-z.]+' <<<"$flags_line" | sed 's|%d/||' | sort -u); do
  [[ $credential == etcd.* ]] || continue  # the unit's own are tests/ops'
  grep -q "^LoadCredential=$credential:/etc/ctxsel/$credential\$" "$DROPIN" ||
    fail "--...=%d/$credential has no LoadCredential=$credential:/etc/ctxsel/$credential"
done
help="$("$SERVER" --helpfull 2>&1 || true)"
for flag in $(grep -oE -- '--[a-z_]+' <<<"$flags_line" | sort -u); do
  grep -qF -- "$flag (" <<<"$help" || fail "ctxsel-server has no flag $flag"
done
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$T/units/ctxsel-server.service.d" "$T/bin"
  ln -s "$SERVER" "$T/bin/ctxsel-server"
  sed "s|/usr/local/bin/|$T/bin/|g" "$R/tools/systemd/ctxsel-server.service" >"$T/units/ctxsel-server.service"
  cp "$DROPIN" "$T/units/ctxsel-server.service.d/etcd.conf"
  out="$(systemd-analyze verify "$T/units/ctxsel-server.service" 2>&1)" || fail "systemd-analyze: $out"
  [[ -z "$out" ]] || fail "systemd-analyze verify: $out"
fi
# A replica with the drop-in's flags starts on the secured etcd and stores
# through it.
unit_flags="$(sed -n 's/^Environment="CTXSEL_SERVER_FLAGS=\(.*\)"$/\1/p' "$DROPIN" | loopback)"
# shellcheck disable=SC2086
"$SERVER" $unit_flags --port_file="$T/port" >"$T/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do [[ -s "$T/port" ]] && break; sleep 0.1; done
[[ -s "$T/port" ]] || fail "the replica did not start: $(cat "$T/server.log")"
"$CLI" --server="127.0.0.1:$(cat "$T/port")" --ca="$T/ctxsel/ca.pem" --token_file="$T/ops.token" \
  variants register saxpy 'saxpy_nv=construct={target}, device={arch(nvptx)}' >"$T/register.out" 2>&1 ||
  fail "register through the replica: $(cat "$T/register.out" "$T/server.log")"
# Read whole before matching: etcdctl writes each key's blank line on its
# own, so `etcdctl | grep -q` under pipefail fails when grep has already
# matched and exited (SIGPIPE; 1 in 40 against a real etcd with two keys).
stored_variants="$("${as_root[@]}" get /ctxsel/variants/ --prefix --keys-only)"
grep -q '^/ctxsel/variants/saxpy/saxpy_nv$' <<<"$stored_variants" ||
  fail "the variant is not in etcd: $("${as_root[@]}" get /ctxsel/ --prefix --keys-only)"
! grep -qF "$password" "$T/server.log" || fail "the server logged the etcd password"
echo "PASS"
