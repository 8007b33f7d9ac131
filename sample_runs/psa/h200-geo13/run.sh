#!/bin/sh
# run.sh: on the H200, one call (session 13): GPUPrune geo (the geometric mean of Mitchell's logarithms, groups of
# four samples) beside the other bounds: check_gridsearch and check_psa (GPU = CPU for every GPUPrune mode), then
# bench-psa's large batch (every pruned row's point and FoM bits against the unpruned kernel on 262,144 searches and
# the CPU on 32,768) and its --rounds (the replay chain's batch sizes).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-geo13/run.sh
# Logs under $OUT (else build/geo13), packed into $OUT/geo13.tar.gz.
set -u
out=${OUT:-build/geo13}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
gpu_begin "$logs"
gpu_describe "$logs"
gpu_build "$logs" "$start" NO_MPI=1 all build-tests
gpu_basis "$logs"
stamp "built"
gpu_checks "$logs" 300 check_gridsearch check_psa
stamp "checks done"
gpu_psa_bench "$logs"
gpu_psa_rounds "$logs"
tar -czf "$out/geo13.tar.gz" -C "$out" logs
exit $status
