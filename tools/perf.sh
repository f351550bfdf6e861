#!/usr/bin/env bash
# The fleet-scale figures (docs/architecture.md, issue "one fleet model"):
# builds with -c opt, runs the benchmarks and the load tool (its simulated
# agents and clients in a process of their own), prints one key=value line
# per figure, then one verdict line per target. Figures are ratios within
# this one run where they can be; absolute ones compare only within a run.
#
#   tools/perf.sh                  # everything (about 10 minutes on 2 cores)
#   SMALL=1000 LARGE=10000 INTERVAL=500ms tools/perf.sh   # the defaults
set -euo pipefail
cd "$(dirname "$0")/.."

SMALL=${SMALL:-1000}
LARGE=${LARGE:-10000}
DEVICES=${DEVICES:-8}
INTERVAL=${INTERVAL:-500ms}
DURATION=${DURATION:-5s}
py=/usr/bin/python3

bazel build -c opt //bench:select_rpc_bench //bench:placement_bench \
  //server:ctxsel-server //bench/load:ctxsel-load >&2
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

# --- Select RPC vs Ping RPC, same server, equal response sizes -----------
"$bin/bench/select_rpc_bench" --benchmark_format=json \
  --benchmark_filter='BM_PingRpc/1200|BM_SelectRpc|BM_SelectInProcess' \
  >"$work/rpc.json" 2>/dev/null
# --- In-process Select at 1k and 100k devices ----------------------------
"$bin/bench/placement_bench" --benchmark_format=json \
  --benchmark_filter='BM_Select/devices:(1000|100000)/policy:0$' \
  >"$work/placement.json" 2>/dev/null

# --- Heartbeats and Select under beats: one server per fleet size -------
load() {  # load NODES -> $work/NODES.kv
  local nodes=$1
  "$bin/server/ctxsel-server" --listen=127.0.0.1:0 --port_file="$work/port$nodes" \
    --data_dir="$work/data$nodes" --heartbeat_interval="$INTERVAL" \
    --max_connection_idle=10m 2>"$work/server$nodes.log" &
  server_pid=$!
  for _ in $(seq 300); do
    [[ -s $work/port$nodes ]] && break
    sleep 0.1
  done
  [[ -s $work/port$nodes ]] || { cat "$work/server$nodes.log" >&2; exit 1; }
  "$bin/bench/load/ctxsel-load" --server="127.0.0.1:$(cat "$work/port$nodes")" \
    --server_pid="$server_pid" --format=kv --nodes="$nodes" \
    --devices_per_node="$DEVICES" --duration="$DURATION" --select_clients=2 \
    --node_prefix="perf$nodes-n" >"$work/$nodes.kv" || true
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
load "$SMALL"
load "$LARGE"

"$py" - "$work" "$SMALL" "$LARGE" "$DEVICES" <<'PY'
import json, sys
work, small, large, devices = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def bench(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        out[b["name"]] = b
    return out

def kv(path):
    out = {}
    for line in open(path):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            out[k] = float(v)
    return out

rpc = bench(f"{work}/rpc.json")
placement = bench(f"{work}/placement.json")
s, l = kv(f"{work}/{small}.kv"), kv(f"{work}/{large}.kv")

def rate(b):
    return b["items_per_second"]

def find(benches, prefix):
    return next(v for k, v in benches.items() if k.startswith(prefix))

sel_1k = find(placement, "BM_Select/devices:1000/")
sel_100k = find(placement, "BM_Select/devices:100000/")
ns = lambda b: b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
figures = {
    "select_rpc_vs_ping": rate(find(rpc, "BM_SelectRpc")) / rate(find(rpc, "BM_PingRpc/1200")),
    "select_100k_vs_1k": ns(sel_100k) / ns(sel_1k),
    "select_in_process_ns_100k": ns(sel_100k),
    f"beats_per_s_{int(large)//1000}k_nodes": l.get("beats_per_s", 0),
    "spurious_rereports": l.get("rereports", 0),
    f"select_p50_{int(large)//1000}k_vs_{int(small)//1000}k_under_beats":
        l["select_p50_us"] / s["select_p50_us"] if s.get("select_p50_us") else 0,
    f"server_rss_mib_{int(large) * devices // 1000}k_devices": l.get("server_rss_mib", 0),
}
for k, v in figures.items():
    print(f"{k}={v:.3f}" if isinstance(v, float) and v < 100 else f"{k}={v:.0f}")
targets = [
    ("select_rpc_vs_ping", ">=", 0.90),
    ("select_100k_vs_1k", "<=", 1.10),
    ("select_in_process_ns_100k", "<=", 2000),
    (f"beats_per_s_{int(large)//1000}k_nodes", ">=", 20000),
    ("spurious_rereports", "<=", 0),
    (f"select_p50_{int(large)//1000}k_vs_{int(small)//1000}k_under_beats", "<=", 1.2),
    (f"server_rss_mib_{int(large) * devices // 1000}k_devices", "<=", 200),
]
for key, op, target in targets:
    v = figures[key]
    ok = v >= target if op == ">=" else v <= target
    print(f"{'MET' if ok else 'MISSED'}: {key} {v:.3f} (target {op} {target})")
print("engine_select_vs_llvm / engine_resolve_vs_llvm: not measured yet "
      "(bench/corpus_bench does not exist yet)")
PY
