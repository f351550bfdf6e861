#!/usr/bin/env bash
# Fuzzes the selector engine, the pragma importer and the binary image
# reader with libFuzzer, ASan and UBSan.
#
#   tools/fuzz.sh ci [selector|importer|images ...]          the CI step (test.sh)
#   tools/fuzz.sh [SECONDS] [selector|importer|images ...]   exploring, SECONDS each
#
# Both build //selector:selector_fuzzer, //selector/pragma:importer_fuzzer and
# //images:images_fuzzer with --config=fuzz in an output base of their own (the clang toolchain must
# not replace the gcc one of everyone else's builds), installing clang-14,
# lld-14, libclang-rt-14-dev and jq when missing.
#
# ci: replays the checked-in regression corpus selector/fuzz/corpus/<target>/
# (seeds plus every input that ever crashed a target), then explores from it
# with a fixed seed and a fixed number of runs, writing new inputs into an
# empty temporary directory. Nothing from earlier runs is read, address space
# randomisation is off (hash seeds come from addresses) and corpus reloading
# is off (it is timed), so the same tree gives the same result on every run:
# the summary lines it prints are identical.
#
# exploring (default 60 s each): corpora and crash reproducers stay in
# $CTXSEL_FUZZ_DIR (default /tmp/ctxsel-fuzz), so later runs start from what
# earlier ones found, plus the regression corpus and the current seeds
# (tests/conformance selectors, tests/sources fixtures). A crash is fixed, then
# its reproducer is added to the regression corpus (the script says how).
#
# Exits non-zero when a fuzzer reports a crash or a sanitizer error.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=explore
if [[ ${1:-} == ci ]]; then
  mode=ci
  shift
fi
seconds=60
if [[ $mode == explore && ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
((${#targets[@]})) || targets=(selector importer images)
work=${CTXSEL_FUZZ_DIR:-/tmp/ctxsel-fuzz}
# One output base per workspace: worktrees fuzzing at once must not share one.
output_base=${CTXSEL_FUZZ_OUTPUT_BASE:-$HOME/.cache/ctxsel-fuzz-bazel-$(pwd | md5sum | cut -c1-8)}
# The CI exploration: libFuzzer's -seed and -runs per target (about 10 s each
# on one core).
ci_seed=${CTXSEL_FUZZ_SEED:-1}
declare -A ci_runs=([selector]=60000 [importer]=6000 [images]=60000)

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

# The current seeds of target $1 into directory $2 (exploring only; the
# regression corpus holds a copy of them as they were when it was made).
seed() {
  local name=$1 corpus=$2
  mkdir -p "$corpus"
  case $name in
    selector)
      jq -r '.[].input.variants[]?.selector // empty' \
        tests/conformance/cases.json | seed_lines "$corpus" ;;
    importer)
      cp tests/sources/fixtures/* "$corpus"/ ;;
    images)  # fixture binaries (images/image_fixtures.h) and clang's
      cp selector/fuzz/corpus/images/seed-* "$corpus"/ ;;
  esac
}

# Runs the fuzzer binary $1 with the remaining arguments: same options in
# both modes, and address space randomisation off where the kernel allows.
fuzz() {
  local binary=$1
  shift
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "${no_aslr[@]}" "$binary" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    "$@"
}

# The last "DONE" line of a libFuzzer log, without its timing fields.
summary() {
  grep -E '^#[0-9]+[[:space:]]+DONE' "$1" | tail -n 1 |
    sed -E 's/[[:space:]]+(exec\/s|rss):.*//; s/[[:space:]]+/ /g'
}

install_missing
no_aslr=(setarch "$(uname -m)" -R)
if ! "${no_aslr[@]}" true 2>/dev/null; then
  echo "note: setarch -R is refused here; runs may differ in coverage"
  no_aslr=()
fi
bazel_fuzz=(bazel --output_base="$output_base")
labels=()
for t in "${targets[@]}"; do
  case $t in
    selector) labels+=(//selector:selector_fuzzer) ;;
    importer) labels+=(//selector/pragma:importer_fuzzer) ;;
    images) labels+=(//images:images_fuzzer) ;;
    *) echo "unknown fuzz target '$t' (selector, importer or images)" >&2; exit 2 ;;
  esac
done
# --symlink_prefix=/: leave the workspace's bazel-* links to the main build.
"${bazel_fuzz[@]}" build --config=fuzz --symlink_prefix=/ "${labels[@]}"
bin=$("${bazel_fuzz[@]}" info --config=fuzz bazel-bin 2>/dev/null)
"${bazel_fuzz[@]}" shutdown

tmp=
if [[ $mode == ci ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi

status=0
for t in "${targets[@]}"; do
  case $t in
    selector) binary=$bin/selector/selector_fuzzer ;;
    importer) binary=$bin/selector/pragma/importer_fuzzer ;;
    images) binary=$bin/images/images_fuzzer ;;
  esac
  regression=selector/fuzz/corpus/$t
  if [[ $mode == ci ]]; then
    mkdir -p "$tmp/$t/new" "$tmp/$t/artifacts"
    log=$tmp/$t/fuzz.log
    inputs=("$regression"/*)
    # Each file once, then the exploration; libFuzzer stops at a crash.
    if fuzz "$binary" -artifact_prefix="$tmp/$t/artifacts/" "${inputs[@]}" \
      >"$log" 2>&1 &&
      fuzz "$binary" -seed="$ci_seed" -runs="${ci_runs[$t]}" -reload=0 \
        -artifact_prefix="$tmp/$t/artifacts/" \
        "$tmp/$t/new" "$regression" >>"$log" 2>&1; then
      echo "$t: replayed ${#inputs[@]} inputs; -seed=$ci_seed: $(summary "$log")"
    else
      status=1
      tail -n 40 "$log"
      for crash in "$tmp/$t/artifacts"/*; do
        [[ -e $crash ]] || continue
        echo "$t: crash input ($(basename "$crash")):"
        head -c 2000 "$crash" | od -c | head -n 20
      done
      echo "$t: FAILED (reproduce: tools/fuzz.sh ci $t)"
    fi
    continue
  fi
  corpus=$work/$t/corpus
  artifacts=$work/$t/artifacts
  seed "$t" "$corpus"
  mkdir -p "$artifacts"
  echo "== $t: ${seconds}s, corpus $corpus, crashes in $artifacts"
  fuzz "$binary" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" "$regression" \
    >"$work/$t/fuzz.log" 2>&1 || status=1
  tail -n 30 "$work/$t/fuzz.log"
  if compgen -G "$artifacts/*" >/dev/null; then
    echo "$t: reproducers in $artifacts. Replay one with"
    echo "  $binary <reproducer>"
    echo "and once fixed (with a unit test), keep it in the regression corpus:"
    echo "  cp <reproducer> $regression/crash-<what-it-broke>"
  fi
done
exit $status
