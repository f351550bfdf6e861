#!/usr/bin/env bash
# --help lists each program's own flags and --version prints its name and
# version (base/flags_usage.h); they printed "No flags matched" and the
# build mode.
set -euo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
version="$(sed -n 's/.*kVersion\[\] = "\(.*\)";.*/\1/p' "$R/base/version.h")"
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {  # check BINARY NAME FLAG...
  local binary="$1" name="$2"
  shift 2
  local help
  help="$("$binary" --help 2>&1 || true)"
  grep -q 'No flags matched' <<<"$help" && fail "$name --help: no flags"
  grep -q 'absl/' <<<"$help" && fail "$name --help lists Abseil's own flags"
  for flag in "$@"; do
    grep -q -- "-$flag" <<<"$help" || fail "$name --help lacks --$flag"
  done
  [[ "$("$binary" --version 2>&1 || true)" == "$name $version" ]] ||
    fail "$name --version: $("$binary" --version 2>&1 || true)"
}
check "$R/server/ctxsel-server" ctxsel-server listen data_dir tls_cert max_threads
check "$R/agent/ctxsel-agent" ctxsel-agent server node_id heartbeat ca
echo PASS
