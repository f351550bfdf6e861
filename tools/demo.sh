#!/usr/bin/env bash
# The local demo: a ctxsel server, a real agent for this machine beside three
# simulated nodes, kernel variants registered straight from a C source file,
# and selections for a few job contexts. Everything stops cleanly at the end.
# It runs the safe setup (docs/security.md): TLS, a certificate per agent
# and role tokens, all made fresh in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
bazel build //server:ctxsel-server //client/cli:ctxsel-cli //agent:ctxsel-agent
bin=$(bazel info bazel-bin 2>/dev/null)

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
# The CLI as the admin (changes) or as a launcher (selections).
admin_cli() {
  echo "\$ ctxsel-cli $*"
  "$bin/client/cli/ctxsel-cli" --server="$address" --ca="$certs/ca.pem" \
    --token_file="$work/admin.token" "$@"
}
cli() {
  echo "\$ ctxsel-cli $*"
  "$bin/client/cli/ctxsel-cli" --server="$address" --ca="$certs/ca.pem" \
    --token_file="$work/launcher.token" "$@"
}

step "offline: the OpenMP Examples' scoring example (fx1=2, fx2=27, fx3=321, fx4=385)"
echo "\$ ctxsel-cli eval tools/demo/spec_scoring.json"
"$bin/client/cli/ctxsel-cli" eval tools/demo/spec_scoring.json

step "a CA, certificates for the server and every node, and role tokens"
certs="$work/certs"
local_node=$(hostname)
fleet_nodes=()
for fleet_file in tools/fixtures/fleet/*.json; do
  fleet_nodes+=("$(basename "$fleet_file" .json)")
done
tools/make_certs.sh "$certs" "$local_node" "${fleet_nodes[@]}"
ls "$certs"
echo "\$ ctxsel-cli admin token --role=admin --name=demo-admin >admin.token 2>>tokens"
"$bin/client/cli/ctxsel-cli" admin token --role=admin --name=demo-admin \
  >"$work/admin.token" 2>>"$work/tokens"
"$bin/client/cli/ctxsel-cli" admin token --role=launcher --name=demo-launcher \
  >"$work/launcher.token" 2>>"$work/tokens"
echo "tokens file (hashes only):"
sed 's/ [0-9a-f]\{56\}\([0-9a-f]\{8\}\)$/ ...\1/' "$work/tokens"

step "starting ctxsel-server with TLS on a free loopback port (state in $work/data)"
"$bin/server/ctxsel-server" --listen=127.0.0.1:0 --port_file="$work/port" \
  --data_dir="$work/data" --tls_cert="$certs/server.pem" \
  --tls_key="$certs/server.key" --client_ca="$certs/ca.pem" \
  --tokens_file="$work/tokens" 2>"$work/server.log" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log"; exit 1; }
address="127.0.0.1:$(cat "$work/port")"
echo "server at $address"

step "starting agents: this machine (real discovery) and three simulated nodes"
agent_tls() { echo --ca="$certs/ca.pem" --tls_cert="$certs/$1.pem" --tls_key="$certs/$1.key"; }
# shellcheck disable=SC2046  # agent_tls prints three flags without spaces
"$bin/agent/ctxsel-agent" --server="$address" --node_id="$local_node" \
  $(agent_tls "$local_node") --heartbeat=1s 2>"$work/agent-local.log" &
pids+=("$!")
for fleet_file in tools/fixtures/fleet/*.json; do
  node=$(basename "$fleet_file" .json)
  # shellcheck disable=SC2046
  "$bin/agent/ctxsel-agent" --server="$address" --node_id="$node" --backends= \
    $(agent_tls "$node") --devices_file="$fleet_file" --heartbeat=1s \
    2>"$work/agent-$node.log" &
  pids+=("$!")
done
expected_nodes=$(( $(ls tools/fixtures/fleet/*.json | wc -l) + 1 ))
for _ in $(seq 100); do
  nodes=$("$bin/client/cli/ctxsel-cli" --server="$address" --ca="$certs/ca.pem" \
            --token_file="$work/admin.token" nodes ls -o name 2>/dev/null | wc -l)
  [[ "$nodes" -ge "$expected_nodes" ]] && break
  sleep 0.1
done

step "the fleet"
cli nodes ls
cli devices ls --device_filter='device={arch(nvptx)}'

step "registering the variants declared in tools/demo/saxpy.c"
admin_cli variants register --from_source tools/demo/saxpy.c
cli variants ls saxpy

step "a large offloaded job: the GPU variants whose condition(N >= 4096) holds win"
cli select --kernel=saxpy --construct=target,teams,parallel,for --var=N=1000000

step "the same job with N = 100: the dynamic GPU candidates fail; the AVX-512 CPU
   variant now scores highest (its isa trait outweighs kind(gpu))"
cli select --kernel=saxpy --construct=target,teams,parallel,for --var=N=100

step "N = 100 again, constrained to GPUs: the any-GPU variant"
cli select --kernel=saxpy --construct=target,teams,parallel,for --var=N=100 \
  --device_filter='device={kind(gpu)}'

step "a host job (parallel for): the AVX-512 CPU variant"
cli select --kernel=saxpy --construct=parallel,for --var=N=100

step "why: the per-class, per-variant breakdown"
cli explain --kernel=saxpy --construct=target,teams,parallel,for --var=N=100 \
  >"$work/explain.txt"
head -n 30 "$work/explain.txt"
echo "[... $(wc -l <"$work/explain.txt") lines in all]"

step "roles: a launcher may not change variants, and no token is no entry"
cli variants rm saxpy saxpy_avx512 || true
echo "\$ ctxsel-cli ping   # TLS, but no token"
"$bin/client/cli/ctxsel-cli" --server="$address" --ca="$certs/ca.pem" ping || true

step "stopping agents (SIGTERM deregisters them) and the server"
for pid in "${pids[@]:1}"; do kill -TERM "$pid"; wait "$pid" || true; done
cli nodes ls
kill -TERM "$server_pid"
wait "$server_pid" || true
pids=()
tail -n 2 "$work/server.log"
echo "demo done"
