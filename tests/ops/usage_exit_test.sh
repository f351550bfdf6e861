#!/usr/bin/env bash
# A usage error exits 2 for every ctxsel program: a misspelt flag and a bad
# flag value (the server's unit, RestartPreventExitStatus=2, then does not
# restart in a loop; Abseil's parser alone exits 1). --help and --version
# exit 0.
set -uo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
SERVER="$R/server/ctxsel-server"
AGENT="$R/agent/ctxsel-agent"
CLI="$R/client/cli/ctxsel-cli"
T="$(mktemp -d "$TEST_TMPDIR/usage.XXXXXX")"
failed=0
# expect CODE PATTERN COMMAND...: COMMAND exits CODE and its stderr matches.
expect() {
  local want=$1 pattern=$2
  shift 2
  "$@" >"$T/out" 2>"$T/err" </dev/null
  local code=$?
  if [[ $code -ne $want ]]; then
    echo "FAIL: $* exited $code, want $want: $(head -3 "$T/err")" >&2
    failed=1
  elif [[ -n "$pattern" ]] && ! grep -qE -- "$pattern" "$T/err"; then
    echo "FAIL: $*: stderr does not match '$pattern': $(head -3 "$T/err")" >&2
    failed=1
  else
    echo "ok: exit $code: $*"
  fi
}
expect 2 'listn' "$SERVER" --listn=127.0.0.1:0 --insecure
expect 2 'max_threads' "$SERVER" --max_threads=many --insecure
expect 2 'heartbeat_interval' "$SERVER" --heartbeat_interval=soon --insecure
expect 2 'insecure' "$SERVER" --insecure=maybe
expect 2 'as_user' "$SERVER" --as_user=root --insecure
# A data directory others may write: refused at start and by the check, as
# a setting (exit 2), with the fix.
mkdir -p "$T/shared" && chmod 0777 "$T/shared"
expect 2 'chmod go-w' "$SERVER" --insecure --listen=127.0.0.1:0 --data_dir="$T/shared"
expect 2 'chmod go-w' "$SERVER" --insecure --listen=127.0.0.1:0 --data_dir="$T/shared" --check_config
expect 2 'servr' "$AGENT" --servr=127.0.0.1:1 --insecure
expect 2 'heartbeat' "$AGENT" --heartbeat=often --insecure
expect 2 'json' "$AGENT" --print --json=perhaps
expect 2 'servr' "$CLI" --servr=127.0.0.1:1 ping
expect 2 'timeout' "$CLI" --timeout=never ping
expect 2 '' "$CLI" no-such-command
for program in "$SERVER" "$AGENT"; do
  expect 0 '' "$program" --help
  expect 0 '' "$program" --version
done
expect 0 '' "$CLI" --help
expect 0 '' "$CLI" --version
(( failed == 0 )) || exit 1
echo PASS
