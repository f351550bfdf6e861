#!/usr/bin/env bash
# Fuzzes the selector engine and the pragma importer with libFuzzer, ASan and
# UBSan for SECONDS each (default 60).
#
#   tools/fuzz.sh [SECONDS] [selector|importer ...]
#
# Installs clang-14, lld-14, libclang-rt-14-dev and jq when missing, builds
# //selector:selector_fuzzer and //selector/pragma:importer_fuzzer with
# --config=fuzz in an output base of its own (the clang toolchain must not
# replace the gcc one of everyone else's builds), seeds each corpus from the
# repository (tests/conformance selectors, tests/sources fixtures) and runs.
# Corpora and crash reproducers stay in $CTXSEL_FUZZ_DIR (default
# /tmp/ctxsel-fuzz), so later runs start from what earlier ones found.
# Exits non-zero when a fuzzer reports a crash or a sanitizer error.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(selector importer)
work=${CTXSEL_FUZZ_DIR:-/tmp/ctxsel-fuzz}
output_base=${CTXSEL_FUZZ_OUTPUT_BASE:-$HOME/.cache/ctxsel-fuzz-bazel}

install_missing() {
  local need=()
  command -v clang-14 >/dev/null || need+=(clang-14)
  command -v ld.lld-14 >/dev/null || need+=(lld-14)
  command -v jq >/dev/null || need+=(jq)
  compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" \
    >/dev/null || need+=(libclang-rt-14-dev)
  ((${#need[@]})) || return 0
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  echo "installing ${need[*]}"
  "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}" ||
    { "${sudo[@]}" apt-get update &&
      "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"; }
}

# Writes one seed file per line of stdin into directory $1.
seed_lines() {
  local i=0 line
  while IFS= read -r line; do
    printf '%s' "$line" >"$1/seed-$i"
    i=$((i + 1))
  done
}

seed() {
  local name=$1 corpus=$2
  mkdir -p "$corpus"
  case $name in
    selector)
      jq -r '.[].input.variants[]?.selector // empty' \
        tests/conformance/cases.json | seed_lines "$corpus" ;;
    importer)
      cp tests/sources/fixtures/* "$corpus"/ ;;
  esac
}

install_missing
bazel_fuzz=(bazel --output_base="$output_base")
labels=()
for t in "${targets[@]}"; do
  case $t in
    selector) labels+=(//selector:selector_fuzzer) ;;
    importer) labels+=(//selector/pragma:importer_fuzzer) ;;
    *) echo "unknown fuzz target '$t' (selector or importer)" >&2; exit 2 ;;
  esac
done
# --symlink_prefix=/: leave the workspace's bazel-* links to the main build.
"${bazel_fuzz[@]}" build --config=fuzz --symlink_prefix=/ "${labels[@]}"
bin=$("${bazel_fuzz[@]}" info --config=fuzz bazel-bin 2>/dev/null)

status=0
for t in "${targets[@]}"; do
  case $t in
    selector) binary=$bin/selector/selector_fuzzer ;;
    importer) binary=$bin/selector/pragma/importer_fuzzer ;;
  esac
  corpus=$work/$t/corpus
  artifacts=$work/$t/artifacts
  seed "$t" "$corpus"
  mkdir -p "$artifacts"
  echo "== $t: ${seconds}s, corpus $corpus, crashes in $artifacts"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$corpus" >"$work/$t/fuzz.log" 2>&1 || status=1
  tail -n 30 "$work/$t/fuzz.log"
done
"${bazel_fuzz[@]}" shutdown
exit $status
