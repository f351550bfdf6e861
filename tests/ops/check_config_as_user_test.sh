#!/usr/bin/env bash
# ctxsel-server --check_config --as_user=USER (docs/operations.md, "Checking a
# configuration"): run as root, it checks as USER, so a key or tokens file
# readable by root only fails the check with the exit code of a start as that
# user (2) and names the file; readable by USER, the check passes; an unknown
# user is a usage error (2). Needs root (to become another user) and the
# `nobody` user; the files live under /tmp, which nobody can reach.
set -euo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
SERVER="$R/server/ctxsel-server"
CLI="$R/client/cli/ctxsel-cli"
DOC="$R/docs/operations.md"
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: not root: --check_config --as_user needs root to become another user"
  exit 0
fi
id nobody >/dev/null 2>&1 || { echo "SKIP: no user 'nobody' to check as"; exit 0; }
# Root of a user namespace that maps no other user (a sandbox) cannot.
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups true 2>/dev/null ||
  { echo "SKIP: root here cannot become nobody (a user namespace?)"; exit 0; }
T="$(mktemp -d /tmp/ctxsel-as-user.XXXXXX)"
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$R/tools/make_certs.sh" "$T/etc" >"$T/certs.log" 2>&1 || fail "make_certs: $(cat "$T/certs.log")"
"$CLI" admin token --role=admin --name=ops 2>"$T/etc/tokens" >/dev/null || fail "admin token"
chmod 0755 "$T/etc"
chmod 0644 "$T/etc/server.pem" "$T/etc/ca.pem"
chmod 0600 "$T/etc/server.key" "$T/etc/tokens"  # root's only
mkdir -m 0700 "$T/data"
chown nobody "$T/data"

# The page's command, its paths made this test's and its user nobody.
command='sudo ctxsel-server --check_config --as_user=ctxsel --listen=0.0.0.0:7070 --data_dir=/var/lib/ctxsel --tls_cert=/etc/ctxsel/server.pem --tls_key=/etc/ctxsel/server.key --client_ca=/etc/ctxsel/ca.pem --tokens_file=/etc/ctxsel/tokens'
grep -qF -- "$command" "$DOC" || fail "docs/operations.md does not show: $command"
read -r -a argv <<<"$(sed -e "s|--as_user=ctxsel|--as_user=nobody|; s|0.0.0.0:7070|127.0.0.1:0|; s|/var/lib/ctxsel|$T/data|; s|/etc/ctxsel/|$T/etc/|g" <<<"$command")"
flags=("${argv[@]:2}")  # without sudo and the program
run() { set +e; "$SERVER" "$@" >"$T/out" 2>"$T/err"; code=$?; set -e; }

# As root the files are readable: the check passes; as nobody it does not.
# (Its own data directory: a check takes the directory's lock, and the lock
# file it leaves would be root's.)
as_root=("${flags[@]/--as_user=nobody/--as_user=root}")
run "${as_root[@]/--data_dir=$T\/data/--data_dir=$T/rootdata}"
[[ $code -eq 0 ]] || fail "as root: exit $code: $(cat "$T/err")"
run "${flags[@]}"
[[ $code -eq 2 ]] || fail "a key only root can read: --as_user=nobody exited $code, want 2: $(cat "$T/err")"
grep -q "tls_key: cannot read $T/etc/server.key" "$T/err" || fail "the check does not name the key: $(cat "$T/err")"
grep -q "tokens_file" "$T/err" || fail "the check does not name the tokens file: $(cat "$T/err")"
grep -q '^config invalid$' "$T/out" || fail "$(cat "$T/out")"

# A start as nobody fails the same way, with the same code.
mkdir -m 0755 "$T/bin"
cp "$SERVER" "$T/bin/ctxsel-server"
chmod 0755 "$T/bin/ctxsel-server"
start=()
for flag in "${flags[@]}"; do
  [[ $flag == --check_config || $flag == --as_user=* ]] || start+=("$flag")
done
set +e
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
  "$T/bin/ctxsel-server" "${start[@]}" >"$T/start.out" 2>"$T/start.err"
start_code=$?
set -e
[[ $start_code -eq 2 ]] || fail "a start as nobody exited $start_code, want 2 like the check: $(cat "$T/start.err")"
grep -qE "cannot read $T/etc/(server.key|tokens)" "$T/start.err" || fail "$(cat "$T/start.err")"

# Readable by nobody: the check passes as nobody.
chmod 0644 "$T/etc/server.key" "$T/etc/tokens"
run "${flags[@]}"
[[ $code -eq 0 ]] || fail "readable files: --as_user=nobody exited $code: $(cat "$T/err")"
grep -q '^config OK$' "$T/out" || fail "$(cat "$T/out")"
grep -q "^tls_key: $T/etc/server.key (readable)$" "$T/out" || fail "$(cat "$T/out")"

# A data directory nobody cannot write fails the check, naming it.
chown root "$T/data"
run "${flags[@]}"
[[ $code -eq 2 ]] || fail "a data directory of root's: exit $code, want 2"
grep -q "data_dir: $T/data" "$T/err" || fail "$(cat "$T/err")"
chown nobody "$T/data"

# An unknown user, and --as_user without --check_config: usage errors.
run "${flags[@]/--as_user=nobody/--as_user=no-such-user-ctxsel}"
[[ $code -eq 2 ]] || fail "an unknown user: exit $code, want 2"
grep -q "as_user: no user 'no-such-user-ctxsel'" "$T/err" || fail "$(cat "$T/err")"
run --as_user=nobody --insecure --listen=127.0.0.1:0
[[ $code -eq 2 ]] || fail "--as_user without --check_config: exit $code, want 2"
echo PASS
