#!/usr/bin/env bash
# Checks `ctxsel-cli eval --compiler=...` against what real binaries call
# (issue 26, item 2): builds each program with the compiler a profile names,
# runs it, and compares the variant it printed with eval's "selected" for
# the variants `ctxsel-cli import` reads from the same source, in the
# context the binary runs in (the host; the compiler's vendor).
# `--compiler=spec` must keep the spec's answer (the first declared).
#
#   compiler_profiles_test.sh CTXSEL_CLI TIE_C
set -uo pipefail

cli=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 passed=0

check() {  # check WHAT WANT GOT
  if [[ "$2" == "$3" ]]; then
    echo "PASS $1: $3"
    passed=$((passed + 1))
  else
    echo "FAIL $1: expected $2, got $3"
    failed=$((failed + 1))
  fi
}

# eval's document: the imported variants of the one kernel, on the host.
document() {  # document VENDOR
  "$cli" import "$source" 2>/dev/null |
    jq --arg vendor "$1" '{
      variants: [.variants[] | {name: .variant, selector: .selector,
                                kernel: .base}],
      context: {device: {kind: ["host", "cpu"]},
                implementation: {vendor: [$vendor]}}}'
}

predicted() {  # predicted DOCUMENT COMPILER
  "$cli" --json eval "$1" --compiler="$2" | jq -r '.selected // "base"'
}

for row in "gcc-12 gcc gnu 12" "clang-14 clang-14 llvm 14"; do
  read -r profile cc vendor major <<<"$row"
  if ! command -v "$cc" >/dev/null; then
    echo "FAIL $profile: $cc is not installed (tools/setup.sh installs it)"
    failed=$((failed + 1))
    continue
  fi
  version=$("$cc" -dumpversion)
  check "$profile version" "$major" "${version%%.*}"
  if ! "$cc" -fopenmp "$source" -o "$work/$profile" 2>"$work/$profile.log"; then
    echo "FAIL $profile: cannot build $source:"
    cat "$work/$profile.log"
    failed=$((failed + 1))
    continue
  fi
  called=$("$work/$profile")
  document "$vendor" >"$work/$profile.json"
  check "$profile: eval predicts the binary's call" "$called" \
    "$(predicted "$work/$profile.json" "$profile")"
  check "$profile: --compiler=spec keeps the first declared" v1 \
    "$(predicted "$work/$profile.json" spec)"
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
