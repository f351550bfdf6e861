#!/usr/bin/env bash
# Checks `ctxsel-cli eval --compiler=...` against what real binaries call
# (issue 26, item 2): builds each program with the compiler a profile names,
# runs it, and compares the variant it printed with eval's "selected" for
# the variants `ctxsel-cli import` reads from the same source, in the
# context the binary runs in (the host; the compiler's vendor).
# `--compiler=spec` must keep the spec's answer (the first declared).
#
# A program the compiler refuses must be refused by eval too (exit 2).
#
#   compiler_profiles_test.sh CTXSEL_CLI PROGRAM.c=SPEC_ANSWER...
set -uo pipefail

cli=$1
shift
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

# A program's header lines: "// context: C1,C2" (the constructs enclosing
# the call, outermost first) and "// compilers: NAME..." (only these).
header() {  # header SOURCE KEY
  sed -n "s|^// $2: ||p" "$1" | head -1
}

# eval's document: the imported variants of the one kernel (or the `when`
# clauses of the one metadirective, named by their directive), in the
# context the binary runs in: the host, the compiler's vendor, the
# program's constructs.
document() {  # document SOURCE VENDOR
  "$cli" import "$1" 2>/dev/null |
    jq --arg vendor "$2" --arg arch "$(uname -m)" \
      --arg constructs "$(header "$1" context)" '
      (if (.metadirectives | length) > 0 then
         {directive: "metadirective",
          variants: [.metadirectives[0].when[] |
                     {name: .directive, selector: .selector}]}
       else
         {variants: [.variants[] | {name: .variant, selector: .selector,
                                    kernel: .base}]}
       end) + {
      context: {construct: ($constructs | split(",") | map(select(. != ""))),
                device: {kind: ["host", "cpu"], arch: [$arch]},
                implementation: {vendor: [$vendor]}}}'
}

# What runs when no variant is chosen: the base function, or the
# metadirective's otherwise/default directive.
fallback() {  # fallback SOURCE
  "$cli" import "$1" 2>/dev/null |
    jq -r 'if (.metadirectives | length) > 0
           then .metadirectives[0].otherwise else "base" end'
}

predicted() {  # predicted DOCUMENT COMPILER FALLBACK: the variant, or "refused"
  local out
  if out=$("$cli" --json eval "$1" --compiler="$2" 2>/dev/null); then
    jq -r --arg fallback "$3" '.selected // $fallback' <<<"$out"
  else
    echo "refused (exit $?)"
  fi
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
  for program in "$@"; do
    source=${program%%=*} spec_answer=${program#*=}
    name=$(basename "$source" .c)
    only=$(header "$source" compilers)
    if [[ -n "$only" && " $only " != *" $profile "* ]]; then
      echo "SKIP $name, $profile: the program is for $only"
      continue
    fi
    document "$source" "$vendor" >"$work/$name.$profile.json"
    fallback=$(fallback "$source")
    if "$cc" -fopenmp "$source" -o "$work/$name.$profile" \
      2>"$work/$name.$profile.log"; then
      called=$("$work/$name.$profile")
    else
      called="refused (exit 2)"
    fi
    check "$name, $profile: eval predicts the binary" "$called" \
      "$(predicted "$work/$name.$profile.json" "$profile" "$fallback")"
    check "$name, $profile: --compiler=spec keeps the texts' answer" \
      "$spec_answer" \
      "$(predicted "$work/$name.$profile.json" spec "$fallback")"
  done
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
