#!/usr/bin/env bash
# Every flag `ctxsel-server --help` lists is in docs/operations.md's "Flags"
# table, and every flag of that table is one --help lists.
set -euo pipefail
R="$TEST_SRCDIR/$TEST_WORKSPACE"
T="$(mktemp -d "$TEST_TMPDIR/flags.XXXXXX")"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$R/server/ctxsel-server" --help >"$T/help" 2>&1 || fail "--help exited $?: $(cat "$T/help")"
grep -oE '^    --[a-z0-9_]+ \(' "$T/help" | sed 's/^ *--//; s/ ($//' | sort -u >"$T/help.flags"
(( $(wc -l <"$T/help.flags") >= 30 )) || fail "--help lists only: $(cat "$T/help.flags")"
# The table rows of the section: their first column names the flags.
sed -n '/^## Flags$/,/^## /p' "$R/docs/operations.md" | grep '^| `--' |
  cut -d'|' -f2 | grep -oE -- '--[a-z0-9_]+' | sed 's/^--//' | sort -u >"$T/doc.flags"
[[ -s "$T/doc.flags" ]] || fail "docs/operations.md has no '## Flags' table"
undocumented="$(comm -23 "$T/help.flags" "$T/doc.flags")"
[[ -z "$undocumented" ]] || fail "flags of --help not in docs/operations.md (Flags): $undocumented"
unknown="$(comm -13 "$T/help.flags" "$T/doc.flags")"
[[ -z "$unknown" ]] || fail "docs/operations.md (Flags) lists flags --help does not: $unknown"
echo "PASS: $(wc -l <"$T/help.flags") flags"
