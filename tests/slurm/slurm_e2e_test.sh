#!/bin/bash
# A real Slurm (munged, slurmctld, slurmd) with the ctxsel SPANK plugin, a
# real ctxsel server and agent (slurm_e2e_test.py says what it shows).
set -eu
root="$TEST_SRCDIR/ctxsel"
exec /usr/bin/python3 "$root/tests/slurm/slurm_e2e_test.py" "$root" "$TEST_TMPDIR"
