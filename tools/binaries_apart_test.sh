#!/usr/bin/env bash
# Binaries keep apart (docs/architecture.md, "Where the code lives"): the
# agent includes no client/ or server/ header, the CLI and the client
# library no agent/ or server/ one, and the shared packages (devices/,
# formats/) none of the binaries'. Headers and BUILD labels both count.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/.." 2>/dev/null || true
[[ -d agent && -d client ]] || cd "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-__main__}" || exit 2

# package -> the top-level packages it must not reach
declare -A FORBIDDEN=(
  [agent]="client server slurm"
  [client]="agent server slurm"
  [devices]="agent client server slurm"
  [formats]="agent client server slurm"
)

violations=0
checked=0
for pkg in "${!FORBIDDEN[@]}"; do
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    for other in ${FORBIDDEN[$pkg]}; do
      if [[ $file == */BUILD.bazel ]]; then
        hits=$(grep -nE "\"//$other[/:]" "$file" | grep -v ':__p')
      else
        hits=$(grep -nE "^#include \"$other/" "$file")
      fi
      if [[ -n $hits ]]; then
        while IFS= read -r hit; do
          echo "$file:$hit  ($pkg/ must not reach $other/)"
          violations=$((violations + 1))
        done <<<"$hits"
      fi
    done
  done < <(find "$pkg" \( -name '*.h' -o -name '*.cc' -o -name 'BUILD.bazel' \) -print0)
done

if (( checked == 0 )); then echo "FAIL: no files found"; exit 1; fi
if (( violations > 0 )); then
  echo "FAIL: $violations reference(s) across binaries"
  exit 1
fi
echo "PASS: $checked files; no binary's package reaches another's"
