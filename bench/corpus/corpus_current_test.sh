#!/usr/bin/env bash
# The checked-in corpus is make_corpus.py's output for the conformance cases.
set -euo pipefail
dir="$TEST_SRCDIR/ctxsel"
if ! /usr/bin/python3 "$dir/bench/corpus/make_corpus.py" \
    "$dir/tests/conformance/cases.json" |
    diff -u "$dir/bench/corpus/conformance.jsonl" -; then
  echo "bench/corpus/conformance.jsonl is stale: regenerate it with" \
    "bench/corpus/make_corpus.py tests/conformance/cases.json" >&2
  exit 1
fi
