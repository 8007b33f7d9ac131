#!/bin/sh
# run.sh: on the H200, one call (session 8): the GPU's pruning without a table (GPUPrune log, Mitchell's logarithm) and with a byte table (GPUPrune byte) beside the fine and exponent tables: bench-psa's large batch (bits against the unpruned kernel and the CPU), the chain's batch sizes (--rounds), the Check suites of the bounds and the PSA on the GPU, the pruned kernels' SASS and an ncu profile of each.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; cd SNAPSHOT && sh sample_runs/psa/h200-log8/run.sh [STEPS]
#   STEPS: any of bench rounds sass ncu (default: all four); CHECKS: the suites run first (default: check_gridsearch check_psa)
# Logs under $OUT (else build/log8), packed into $OUT/log8.tar.gz.
set -u
steps=${1:-bench rounds sass ncu}
out=${OUT:-build/log8}
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_gridsearch check_psa}
gpu_prepare "$out/logs" 300
gpu_psa_steps "$out/logs"
if gpu_has sass; then
    cuobjdump --dump-sass build/obj/kernels/gridsearch.o > "$out/logs/sass-all.txt" 2>&1
    # the float kernels of the fine table (template argument 2), the log bound (3) and the byte table (4)
    for m in ${MODES:-2 3 4}; do
        awk -v want="search_tiles_prunedIfLi${m}E" '/Function :/ { on = index($0, want) > 0 } on' \
            "$out/logs/sass-all.txt" > "$out/logs/sass-pruned-$m.txt"
        echo "SASS of search_tiles_pruned<float, $m>: $(wc -l < "$out/logs/sass-pruned-$m.txt") lines"
    done
    rm -f "$out/logs/sass-all.txt"
fi
if gpu_has ncu; then
    gpu_psa_ncu "$out/logs" ${MODES:-2 3 4}
fi
tar -czf "$out/log8.tar.gz" -C "$out" logs
exit $status
