#!/usr/bin/env bash
# ctxsel-load against a real server with its agents in two processes: the
# counts of both processes are summed, every stream lives to the end, every
# node is deregistered at the end, and the tool exits 0.
set -euo pipefail
server=server/ctxsel-server
load=bench/load/ctxsel-load
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/load.XXXXXX")
"$server" --insecure --listen=127.0.0.1:0 --port_file="$work/port" \
  --data_dir="$work/data" --heartbeat_interval=1s 2>"$work/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { cat "$work/server.log"; exit 1; }
"$load" --server="127.0.0.1:$(cat "$work/port")" --nodes=41 \
  --agent_processes=2 --kernels=2 --variants=4 --duration=300ms \
  --select_clients=1 --format=kv >"$work/out.kv"
cat "$work/out.kv"
value() { sed -n "s/^$1=//p" "$work/out.kv"; }
[[ $(value nodes) == 41 ]]
[[ $(value agent_processes) == 2 ]]
[[ $(value streams_failed) == 0 ]]
# Both processes' agents beat: 41 streams, every second, for 1.6 s.
(( $(value beats_answered) >= 41 ))
# Every node was reported and is gone at the end (deregistered, or expired
# when its stream closed before its turn came).
grep -q "node load-n40 added" "$work/server.log"
grep -q "node load-n0 added" "$work/server.log"
# Every addition (a node expired on a loaded machine reports again) is
# matched by a removal. (The server logs removals from its notifier
# thread: wait up to 10 s.)
matched() {
  (( $(grep -c "removed: " "$work/server.log") ==
     $(grep -c " added: " "$work/server.log") ))
}
for _ in $(seq 100); do matched && break; sleep 0.1; done
matched
(( $(grep -c "removed: " "$work/server.log") >= 41 ))
echo PASS
