#!/usr/bin/env bash
# The server's packages, from the top layer down: a package may include
# headers of, and depend on, only the packages below it (its own included).
# This list is the architecture diagram of docs/architecture.md; a new
# package gets its line here.
set -uo pipefail
LAYERS=(
  main        # composition root
  rpc         # ctxsel.v1 services
  replicas    # etcd replication of registry, claims, nodes
  claims      # pick-and-claim
  placement   # the Placer and its Fleet
  fleet       # nodes' liveness, reports, device filter, node codec
  registry    # kernel variants
  access      # authentication, roles, limits
  store/etcd  # the etcd Store
  store       # the Store interface, SQLite, data dir
  metrics     # Prometheus metrics
  model       # the shared vocabulary
)

root=${1:-$(dirname "$(readlink -f "$0")")}
cd "$root" || exit 2
rank() {  # rank PACKAGE -> index in LAYERS, or empty
  local i
  for i in "${!LAYERS[@]}"; do
    [[ ${LAYERS[$i]} == "$1" ]] && { echo "$i"; return; }
  done
}
# The package of a path under server/: the longest LAYERS entry it starts with.
package_of() {
  local path=$1 best=""
  for layer in "${LAYERS[@]}"; do
    [[ $path == "$layer"/* && ${#layer} -gt ${#best} ]] && best=$layer
  done
  echo "$best"
}

violations=0
while IFS= read -r -d '' file; do
  rel=${file#./}
  from=$(package_of "$rel")
  if [[ -z $from ]]; then
    [[ $rel == */* ]] && { echo "$rel: in no package of LAYERS"; violations=$((violations + 1)); }
    continue
  fi
  from_rank=$(rank "$from")
  if [[ $rel == */BUILD.bazel ]]; then
    targets=$(grep -oE '"//server/[a-z_/]+(:[A-Za-z0-9_.-]+)?"' "$file" | grep -v ':__' | tr -d '"' | sed -E 's|^//server/||; s|:.*$||')
  else
    targets=$(grep -oE '^#include "server/[^"]+"' "$file" | sed -E 's|^#include "server/||; s|"$||')
  fi
  for target in $targets; do
    [[ $rel == */BUILD.bazel ]] && to=$(package_of "$target/x") || to=$(package_of "$target")
    [[ -z $to ]] && { echo "$rel -> server/$target: in no package of LAYERS"; violations=$((violations + 1)); continue; }
    to_rank=$(rank "$to")
    if (( to_rank < from_rank )); then
      echo "$rel ($from) reaches up to server/$target ($to)"
      violations=$((violations + 1))
    fi
  done
done < <(find . -mindepth 2 \( -name '*.h' -o -name '*.cc' -o -name 'BUILD.bazel' \) -print0)

if (( violations > 0 )); then
  echo "FAIL: $violations reference(s) against the layer order"
  exit 1
fi
echo "PASS: no package of server/ reaches a package above it"
