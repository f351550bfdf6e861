#!/bin/bash
# Every ctxsel command in README.md and docs/*.md, run against a real server
# and agents (docs_commands.py says how). Debian's Python, no packages.
set -eu
root="$TEST_SRCDIR/ctxsel"
exec /usr/bin/python3 "$root/tests/docs/docs_commands.py" "$root" "$TEST_TMPDIR"
