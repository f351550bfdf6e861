#!/usr/bin/env bash
# Runs every test: installs what is missing, then `bazel test //...`.
# Prints Bazel's failures; the last line is "N passed, N failed", counted from
# Bazel's per-target results (plus the CI fuzz step, when clang is here).
# Exits non-zero if a test failed or the build broke.
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log" "$log.fuzz"' EXIT
# Every top-level package tree, but not Bazel's convenience symlinks
# (bazel-<dir>), which Bazel 4 would otherwise walk into with //... .
patterns=()
for dir in */; do
  dir=${dir%/}
  [[ -L "$dir" ]] && continue
  [[ -n $(find "$dir" -name BUILD.bazel -print -quit) ]] && patterns+=("//$dir/...")
done

# --keep_going: report every failing target, not just the first.
bazel test --keep_going --test_summary=short "$@" -- "${patterns[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# Bazel prints one summary line per test target: "//pkg:target  PASSED in 1.2s"
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|FLAKY|NO STATUS|INCOMPLETE|FAILED TO BUILD)' "$log")

# The libFuzzer targets (selector parser + evaluator, pragma importer,
# binary image reader), when
# clang is here: the regression corpus, then a fixed-seed, fixed-run-count
# exploration (tools/fuzz.sh ci), so the result is the same on every run. It
# counts as one test in the tally.
if command -v clang-14 >/dev/null; then
  if bash tools/fuzz.sh ci selector importer images >"$log.fuzz" 2>&1; then
    grep -E '^(selector|importer|images): replayed' "$log.fuzz"
    echo "fuzz  PASSED (regression corpus + fixed-seed runs: no crash or sanitizer report)"
    passed=$((passed + 1))
  else
    tail -n 60 "$log.fuzz"
    echo "fuzz  FAILED"
    failed=$((failed + 1))
  fi
  rm -f "$log.fuzz"
else
  echo "fuzz: skipped (clang-14 not installed; tools/fuzz.sh installs it)"
fi

if [[ $status -ne 0 && $failed -eq 0 ]]; then
  echo "bazel exited with status $status before running the tests (build broken?)"
  failed=1
fi
echo "$passed passed, $failed failed"
[[ $status -eq 0 && $failed -eq 0 ]]
