#!/bin/sh
# run.sh: on the H200, one call (session 15): the int16 packing quantised eight values at a time (gs_quantise_run).
# The Check suites, then bench-psa's large batch (262,144 searches, --check) for this tree and the tree before
# (BEFORE, its sources: default build/trees/before), REPEAT times each, alternating; the float and int16 full-search GPU rows shown
# with where each call goes (before the first kernel, the kernels, the rest).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-quant15/run.sh
# Logs under $OUT (else build/quant15), packed into $OUT/quant15.tar.gz.
set -u
out=${OUT:-build/quant15}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
BEFORE=${BEFORE-build/trees/before}
gpu_begin "$logs"
gpu_describe "$logs"
gpu_build_beside "$logs" "$start"
stamp "built: this tree and ${BEFORE:-no other}"
gpu_checks "$logs" 300 ${CHECKS-check_gridsearch check_psa}
stamp "checks done"
gpu_psa_alternate "$logs"
tar -czf "$out/quant15.tar.gz" -C "$out" logs
exit $status
