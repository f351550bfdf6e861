#!/usr/bin/env bash
# corpus_bench reads the checked-in corpus: every line is a document, the
# conformance suite's error cases are rejected, the rest are timed.
set -euo pipefail
dir="$TEST_SRCDIR/ctxsel"
out=$("$dir/bench/corpus_bench" --rounds=1 "$dir/bench/corpus/conformance.jsonl")
echo "$out"
lines=$(grep -c . "$dir/bench/corpus/conformance.jsonl")
grep -qx "documents=$lines" <<<"$out"
grep -qx "timed=70" <<<"$out"
grep -qx "rejected=36" <<<"$out"
grep -q "^select_ns_total=[0-9]" <<<"$out"
