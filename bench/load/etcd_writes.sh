#!/usr/bin/env bash
# etcd's write rate under a simulated fleet (docs/deployment.md, "etcd
# load"): starts a real etcd and one ctxsel-server replica on it
# (--store=etcd://) on loopback, runs ctxsel-load with NODES agents beating
# every second (their utilisation drifts by 1% a beat), samples etcd's own
# counters once a second, and prints the writes (puts + deletes + txns)
# per second: the burst of the initial reports, then the steady rate that
# the utilisation rule (--store_utilisation_delta/_interval) allows, then
# the tool's deregistrations at the end (one delete per node).
#
#   bench/load/etcd_writes.sh                    # 10,000 nodes, 40 s
#   NODES=2000 DURATION=10s INTERVAL=1s bench/load/etcd_writes.sh
# On a busy machine the server may not keep up with 10,000 agents beating
# every second (nodes expire and report again: "rereports" below); the
# default INTERVAL of 5 s (node TTL 15 s) keeps the fleet steady.
set -euo pipefail
cd "$(dirname "$0")/../.."

NODES=${NODES:-10000}
DURATION=${DURATION:-20s}   # ctxsel-load's Ping and Select phases each
DEVICES=${DEVICES:-8}
INTERVAL=${INTERVAL:-5s}
AGENT_PROCESSES=${AGENT_PROCESSES:-2}  # ctxsel-load --agent_processes

bazel build //server:ctxsel-server //bench/load:ctxsel-load >&2
bin=$(bazel info bazel-bin 2>/dev/null)

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
client=$(free_port)
peer=$(free_port)
mkdir -m 700 "$work/etcd"
etcd --name=load --data-dir="$work/etcd" --logger=zap --log-outputs=stderr \
  --listen-client-urls="http://127.0.0.1:$client" \
  --advertise-client-urls="http://127.0.0.1:$client" \
  --listen-peer-urls="http://127.0.0.1:$peer" \
  --initial-advertise-peer-urls="http://127.0.0.1:$peer" \
  --initial-cluster="load=http://127.0.0.1:$peer" 2>"$work/etcd.log" &
pids+=($!)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$client/health" >/dev/null && break
  sleep 0.2
done

"$bin/server/ctxsel-server" --insecure --listen=127.0.0.1:0 \
  --port_file="$work/port" --store="etcd://127.0.0.1:$client" \
  --heartbeat_interval="$INTERVAL" \
  2>"$work/server.log" &
server_pid=$!
pids+=($server_pid)
for _ in $(seq 200); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { cat "$work/server.log" >&2; exit 1; }

# etcd's writes so far; nothing when the scrape fails (a busy machine).
writes() {
  curl -sf --max-time 2 "http://127.0.0.1:$client/metrics" |
    awk '/^etcd_mvcc_(put|delete|txn)_total /{n += $2; seen = 1}
         END {if (seen) printf "%d\n", n}'
}
(
  previous=$(writes)
  while sleep 1; do
    now=$(writes)
    [[ -n $now && -n $previous ]] && echo $((now - previous))
    [[ -n $now ]] && previous=$now
  done
) >"$work/rates" &
sampler=$!
pids+=($sampler)

"$bin/bench/load/ctxsel-load" --server="127.0.0.1:$(cat "$work/port")" \
  --nodes="$NODES" --devices_per_node="$DEVICES" --duration="$DURATION" \
  --select_clients=1 --agent_processes="$AGENT_PROCESSES" --format=kv \
  >"$work/load.txt"
kill "$sampler"

# Per-second etcd writes while the fleet beat: the first seconds hold the
# reports (one write per node), the rest is the utilisation rule's rate.
sort -n "$work/rates" | awk -v nodes="$NODES" '
  { r[NR] = $1; total += $1 }
  END {
    printf "nodes=%d seconds=%d etcd_writes_total=%d\n", nodes, NR, total
    printf "etcd_writes_per_s_median=%d etcd_writes_per_s_max=%d\n",
           r[int((NR + 1) / 2)], r[NR]
  }'
echo "per-second etcd writes: $(tr '\n' ' ' <"$work/rates")"
curl -s "http://127.0.0.1:$client/metrics" | grep -E '^etcd_mvcc_(put|delete|txn|range)_total' >&2
grep -E 'nodes|report' "$work/load.txt" >&2 || true
