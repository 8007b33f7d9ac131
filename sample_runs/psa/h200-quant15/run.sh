#!/bin/sh
# run.sh: on the H200, one call (session 15): the int16 packing quantised eight values at a time (gs_quantise_run).
# The Check suites, then bench-psa's large batch (262,144 searches, --check) for this tree and the tree before
# (BEFORE, its sources: default build/trees/before), REPEAT times each, alternating; the float and int16 full-search GPU rows shown
# with where each call goes (before the first kernel, the kernels, the rest).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-quant15/run.sh
# Logs under $OUT (else build/quant15), packed into $OUT/quant15.tar.gz.
set -u
. "$(dirname "$0")/../../gpu-common.sh"
gpu_psa_session quant15
