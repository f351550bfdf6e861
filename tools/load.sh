#!/usr/bin/env bash
# Load test of ctxsel-server at two fleet sizes, on loopback.
#
# Builds with -c opt, starts one ctxsel-server on a free port, runs
# bench/load's ctxsel-load against it with a small and a large simulated
# fleet (each node an agent with a heartbeat stream) and prints both runs
# and the ratios that matter: Select p50 at the large fleet over the small
# one (flat = per-request cost independent of fleet size) and Select over
# Ping (the no-op RPC) in the same run. Compare ratios, not absolute
# figures: this machine runs other work.
#
#   tools/load.sh                       # 200 and 2,000 nodes x 8 devices
#   SMALL=100 LARGE=1000 DURATION=3s CLIENTS=2 tools/load.sh
#   INTERVAL=10s tools/load.sh          # slower heartbeats, less beat traffic
set -euo pipefail
cd "$(dirname "$0")/.."

SMALL=${SMALL:-200}
LARGE=${LARGE:-2000}
DURATION=${DURATION:-5s}
CLIENTS=${CLIENTS:-2}
DEVICES=${DEVICES:-8}
INTERVAL=${INTERVAL:-1s}

bazel build -c opt //server:ctxsel-server //bench/load:ctxsel-load
bin=$(bazel info -c opt bazel-bin 2>/dev/null)

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/server/ctxsel-server" --insecure --listen=127.0.0.1:0 --port_file="$work/port" \
  --data_dir="$work/data" --heartbeat_interval="$INTERVAL" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 300); do
  [[ -s $work/port ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.1
done
[[ -s $work/port ]] || { echo "server did not start"; exit 1; }
port=$(cat "$work/port")

run() {  # run NODES -> $work/NODES.kv
  "$bin/bench/load/ctxsel-load" --server="127.0.0.1:$port" \
    --server_pid="$server_pid" --format=kv --nodes="$1" \
    --devices_per_node="$DEVICES" --duration="$DURATION" \
    --select_clients="$CLIENTS" --node_prefix="load$1-n" >"$work/$1.kv"
}
run "$SMALL"
run "$LARGE"

# Both runs side by side, then the ratios.
paste -d= "$work/$SMALL.kv" "$work/$LARGE.kv" |
  awk -F= -v s="$SMALL" -v l="$LARGE" '
    NR == 1 { printf "%-16s %14s %14s\n", "", s " nodes", l " nodes" }
    { printf "%-16s %14s %14s\n", $1, $2, $4; small[$1] = $2; large[$1] = $4 }
    function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "n/a" }
    END {
      print ""
      print "Select p50, large / small fleet:      " ratio(large["select_p50_us"], small["select_p50_us"])
      print "Select throughput, large / small:     " ratio(large["select_per_s"], small["select_per_s"])
      print "Select p50 / Ping p50 (large fleet):  " ratio(large["select_p50_us"], large["ping_p50_us"])
      print "Ping / Select throughput (large):     " ratio(large["ping_per_s"], large["select_per_s"])
      print "Server RSS, large / small:            " ratio(large["server_rss_mib"], small["server_rss_mib"])
    }'
