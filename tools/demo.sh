#!/usr/bin/env bash
# The local demo: installs what is missing, builds, starts a ctxsel server,
# shows it working, and stops it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
bazel build //server:ctxsel-server //client/cli:ctxsel-cli
bin=$(bazel info bazel-bin 2>/dev/null)
server="$bin/server/ctxsel-server"
cli="$bin/client/cli/ctxsel-cli"

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "starting ctxsel-server on a free loopback port"
"$server" --listen=127.0.0.1:0 --port_file="$work/port" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log"; exit 1; }
address="127.0.0.1:$(cat "$work/port")"
echo "server at $address"

step "ctxsel-cli ping"
"$cli" --server="$address" ping

step "stopping the server (SIGTERM)"
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=""
tail -n 2 "$work/server.log"
echo "demo done"
