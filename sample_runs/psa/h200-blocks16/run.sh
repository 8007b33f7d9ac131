#!/bin/sh
# run.sh: on the H200, one call (session 16): search_tiles_pruned with six resident blocks a multiprocessor
# (__launch_bounds__(128, 6): 80 registers) against the tree before (BEFORE, its sources: default build/trees/before).
# The Check suites (CHECKS), then bench-psa's large batch for both trees, alternating (REPEAT), and ncu of this
# tree's float kernels for the modes NCU names (none by default).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-blocks16/run.sh
# Logs under $OUT (else build/blocks16), packed into $OUT/blocks16.tar.gz.
set -u
out=${OUT:-build/blocks16}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
BEFORE=${BEFORE-build/trees/before}
gpu_open "$logs"
gpu_checks "$logs" 300 ${CHECKS-check_gridsearch check_psa}
stamp "checks done"
gpu_psa_alternate "$logs"
[ -n "${NCU:-}" ] && gpu_psa_ncu "$logs" $NCU
tar -czf "$out/blocks16.tar.gz" -C "$out" logs
exit $status
