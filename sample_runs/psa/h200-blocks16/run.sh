#!/bin/sh
# run.sh: on the H200, one call (session 16): search_tiles_pruned with six resident blocks a multiprocessor
# (__launch_bounds__(128, 6): 80 registers) against the tree before (BEFORE, its sources: default build/trees/before).
# The Check suites (CHECKS), then bench-psa's large batch for both trees, alternating (REPEAT), and ncu of this
# tree's float kernels for the modes NCU names (none by default).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-blocks16/run.sh
# Logs under $OUT (else build/blocks16), packed into $OUT/blocks16.tar.gz.
set -u
. "$(dirname "$0")/../../gpu-common.sh"
gpu_psa_session blocks16
