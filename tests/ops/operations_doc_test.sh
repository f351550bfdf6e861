#!/usr/bin/env bash
# Runs the commands of docs/operations.md ("Install", "Checking a
# configuration", "Upgrade", "Metrics") on loopback with port 0 and temporary
# paths, after checking that the page shows each one as written here, and
# checks the systemd units: `systemd-analyze verify` where it exists, every
# flag they pass against the binaries' --helpfull, and that keys and tokens
# come as credentials (LoadCredential).
set -euo pipefail

R="$TEST_SRCDIR/$TEST_WORKSPACE"
T="$(mktemp -d "$TEST_TMPDIR/ops.XXXXXX")"
DOC="$R/docs/operations.md"
SERVER="$R/server/ctxsel-server"
AGENT="$R/agent/ctxsel-agent"
CLI="$R/client/cli/ctxsel-cli"
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The page shows `command` verbatim.
shown() { grep -qF -- "$1" "$DOC" || fail "docs/operations.md does not show: $1"; }

# --- systemd units ---------------------------------------------------------
mkdir -p "$T/bin" "$T/units"
ln -s "$SERVER" "$T/bin/ctxsel-server"
ln -s "$AGENT" "$T/bin/ctxsel-agent"
for name in ctxsel-server ctxsel-agent; do
  unit="$R/tools/systemd/$name.service"
  staged="$T/units/$name.service"
  sed "s|/usr/local/bin/|$T/bin/|g" "$unit" >"$staged"
  if command -v systemd-analyze >/dev/null; then
    out="$(systemd-analyze verify "$staged" 2>&1)" || fail "$name: $out"
    [[ -z "$out" ]] || fail "systemd-analyze verify $name: $out"
  else
    echo "systemd-analyze not installed: $name checked by its flags only"
  fi
  for key in DynamicUser ProtectSystem Restart; do
    grep -q "^$key=" "$unit" || fail "$name: no $key="
  done
  # Keys and tokens come as credentials (LoadCredential), named %d/NAME in
  # the flags; no flag reads /etc/ctxsel, which stays root's.
  flags_line="$(grep '^Environment="CTXSEL_' "$unit")"
  ! grep -q '/etc/ctxsel' <<<"$flags_line" || fail "$name: a flag reads /etc/ctxsel directly: $flags_line"
  credentials="$(grep -oE '%d/[a-z.]+' <<<"$flags_line" | sed 's|%d/||' | sort -u)"
  [[ -n "$credentials" ]] || fail "$name: no flag names a credential (%d/...)"
  for credential in $credentials; do
    grep -q "^LoadCredential=$credential:/etc/ctxsel/$credential\$" "$unit" ||
      fail "$name: --...=%d/$credential has no LoadCredential=$credential:/etc/ctxsel/$credential"
  done
  grep -q '^RestartPreventExitStatus=2$' "$unit" || fail "$name: restarts after exit 2 (a usage error)"
  help="$("$T/bin/$name" --helpfull 2>&1 || true)"
  for flag in $(grep -v '^#' "$unit" | grep -oE -- '--[a-z_]+' | sort -u); do
    grep -qF -- "$flag (" <<<"$help" || fail "$name has no flag $flag"
  done
done
grep -q '^StateDirectory=ctxsel$' "$R/tools/systemd/ctxsel-server.service" ||
  fail "ctxsel-server.service: no StateDirectory"

# The server unit's flags pass --check_config (its ports and directories
# replaced by free ports and temporary ones; its credentials directory holds
# real keys, a CA and a tokens file, which the check reads as the start
# would).
mkdir -p "$T/etc"
bash "$R/tools/make_certs.sh" "$T/etc" >"$T/certs.log" 2>&1 || fail "make_certs: $(cat "$T/certs.log")"
"$CLI" admin token --role=admin --name=ops 2>"$T/etc/tokens" >/dev/null || fail "admin token"
# The unit's credentials directory (%d) holds copies of /etc/ctxsel's files.
loopback() { sed -e "s|0.0.0.0:7070|127.0.0.1:0|; s|127.0.0.1:9464|127.0.0.1:0|; s|/var/lib/ctxsel|$T/data|; s|/etc/ctxsel/|$T/etc/|g; s|%d/|$T/etc/|g"; }
unit_flags="$(sed -n 's/^Environment="CTXSEL_SERVER_FLAGS=\(.*\)"$/\1/p' \
  "$R/tools/systemd/ctxsel-server.service" | loopback)"
[[ -n "$unit_flags" ]] || fail "no CTXSEL_SERVER_FLAGS in the unit"
# shellcheck disable=SC2086
"$SERVER" --check_config $unit_flags >"$T/unit_check.out" ||
  fail "the unit's flags fail --check_config: $(cat "$T/unit_check.out")"

# --- Checking a configuration ---------------------------------------------
command='ctxsel-server --check_config --listen=0.0.0.0:7070 --data_dir=/var/lib/ctxsel --metrics_listen=127.0.0.1:9464 --tls_cert=/etc/ctxsel/server.pem --tls_key=/etc/ctxsel/server.key --client_ca=/etc/ctxsel/ca.pem --tokens_file=/etc/ctxsel/tokens'
shown "$command"
read -r -a argv <<<"$(loopback <<<"$command")"
"$SERVER" "${argv[@]:1}" >"$T/check.out" 2>"$T/check.err" ||
  fail "--check_config: $(cat "$T/check.err")"
grep -q '^listen: serve ctxsel.v1 on 127.0.0.1:0$' "$T/check.out" || fail "$(cat "$T/check.out")"
grep -q '^config OK$' "$T/check.out" || fail "$(cat "$T/check.out")"
[[ ! -e "$T/data" ]] || fail "--check_config created the data directory"
set +e
"$SERVER" "${argv[@]:1}" --max_threads=0 >"$T/bad.out" 2>"$T/bad.err"
code=$?
set -e
[[ $code -eq 2 ]] || fail "--check_config with --max_threads=0 exited $code, want 2"
# A key the start could not read fails the check, and the start, with the
# same code (2: RestartPreventExitStatus, no restart loop).
mv "$T/etc/server.key" "$T/etc/server.key.away"
set +e
"$SERVER" "${argv[@]:1}" >"$T/nokey.out" 2>"$T/nokey.err"
check_code=$?
"$SERVER" "${argv[@]:2}" --port_file="$T/nokey.port" >"$T/nokey_start.out" 2>"$T/nokey_start.err"
start_code=$?
set -e
mv "$T/etc/server.key.away" "$T/etc/server.key"
[[ $check_code -eq 2 ]] || fail "--check_config without the key exited $check_code, want 2"
grep -q 'tls_key' "$T/nokey.err" || fail "the check does not name --tls_key: $(cat "$T/nokey.err")"
[[ $start_code -eq 2 ]] || fail "a start without the key exited $start_code, want 2: $(cat "$T/nokey_start.err")"
grep -q 'max_threads: must be at least 1' "$T/bad.err" || fail "$(cat "$T/bad.err")"
grep -q '^config invalid$' "$T/bad.out" || fail "$(cat "$T/bad.out")"

# --- Install ----------------------------------------------------------------
shown 'sudo tools/install.sh --enable ctxsel-server'
shown 'sudo tools/install.sh --enable ctxsel-agent'
DESTDIR="$T/root" BIN_DIR="$R" "$R/tools/install.sh" --enable ctxsel-server >"$T/install.out"
grep -q 'not starting ctxsel-server' "$T/install.out" || fail "$(cat "$T/install.out")"
for f in usr/local/bin/ctxsel-server usr/local/bin/ctxsel-agent usr/local/bin/ctxsel-cli; do
  [[ -x "$T/root/$f" ]] || fail "install.sh did not install $f"
done
for f in ctxsel-server.service ctxsel-agent.service; do
  [[ -f "$T/root/etc/systemd/system/$f" ]] || fail "install.sh did not install $f"
done

# --- Upgrade and Metrics, against a running server ---------------------------
"$SERVER" --insecure --listen=127.0.0.1:0 --port_file="$T/port" --data_dir="$T/live" \
  --metrics_listen=127.0.0.1:0 --metrics_port_file="$T/metrics_port" 2>"$T/server.log" &
server_pid=$!
for _ in $(seq 1 300); do
  [[ -s "$T/port" && -s "$T/metrics_port" ]] && break
  sleep 0.1
done
[[ -s "$T/port" ]] || fail "server did not start: $(cat "$T/server.log")"
port="$(cat "$T/port")"
metrics_port="$(cat "$T/metrics_port")"
"$CLI" --insecure --server="127.0.0.1:$port" select --kernel=none_registered >/dev/null 2>&1 || true

shown 'ctxsel-cli --server=HOST:7070 admin backup /backups/ctxsel-before-upgrade.db'
mkdir -p "$T/backups"
"$CLI" --insecure --server="127.0.0.1:$port" admin backup "$T/backups/ctxsel-before-upgrade.db" >"$T/backup.out" ||
  fail "admin backup: $(cat "$T/backup.out")"
[[ -s "$T/backups/ctxsel-before-upgrade.db" ]] || fail "no backup written"

shown "curl -s http://127.0.0.1:9464/metrics | grep '^ctxsel_selections_total'"
curl -s "http://127.0.0.1:$metrics_port/metrics" | grep '^ctxsel_selections_total' >"$T/metrics.out" ||
  fail "no ctxsel_selections_total on /metrics"
grep -q 'ctxsel_selections_total{outcome="none",policy="least_loaded"} 1' "$T/metrics.out" ||
  fail "$(cat "$T/metrics.out")"

shown 'promtool check rules tools/prometheus/ctxsel-alerts.yml'
if command -v promtool >/dev/null; then
  (cd "$R" && promtool check rules tools/prometheus/ctxsel-alerts.yml) >"$T/promtool.out" 2>&1 ||
    fail "$(cat "$T/promtool.out")"
else
  echo "promtool not installed: alert rules not checked"
fi
echo PASS
