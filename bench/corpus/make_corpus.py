#!/usr/bin/env python3
"""Writes the conformance cases as a corpus for bench/corpus_bench.

Each case of tests/conformance/cases.json holds an `eval` document (the
`ctxsel-cli eval` input, docs/selectors.md) under "input"; the corpus is
those documents, one per line, in the suite's order. Cases that expect an
error are kept: corpus_bench counts them as rejected.

  bench/corpus/make_corpus.py tests/conformance/cases.json \
      >bench/corpus/conformance.jsonl

corpus_current_test checks that the checked-in file is this script's output.
"""
import json
import sys


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: make_corpus.py CASES.json >CORPUS.jsonl")
    with open(argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    for case in cases:
        sys.stdout.write(json.dumps(case["input"], separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv)
