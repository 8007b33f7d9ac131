#!/bin/sh
# run.sh: on the H200, one call (session 17): this tree against the session's first (BEFORE: build/trees/before)
# in the replay chain, sequential rows alternating, with `GPUPrune log` rows and a wide pipelined row; then a copy
# with kFillResident 32 (build/trees/fill32) alternating with this tree; then this tree with the reader's blocks
# of 128 and 256 MB instead of 64 (READER_BUFFER).  The Check suites CHECKS names first.
#   device command (from a tree snapshot, the copies' sources carried under build/trees):
#   . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-blocks17/run.sh
# Logs under $OUT (else build/blocks17), packed into $OUT/blocks17.tar.gz (each chain run's as its own tar inside).
set -u
. "$(dirname "$0")/../../gpu-common.sh"
gpu_session blocks17
(cd build/trees/fill32 && make -j4 NO_MPI=1 all > build.log 2>&1) &
BEFORE=build/trees/before gpu_build_beside "$logs" "$start"
wait
stamp "built: this tree, before, fill32"
gpu_checks "$logs" 300 ${CHECKS-check_psa check_adf check_reliability}
stamp "checks done"
P=PSA.conf:GPUPrune
# chain ROWS_NAME OUT_NAME, the rest in the environment: h200-seq13/run.sh's rows and table, shown and packed
chain() {
    OUT=$logs/$1 CHECKS= sh sample_runs/full_chain/h200-seq13/run.sh > "$logs/$1.out" 2>&1 || status=1
    grep -E '^\| (seq|pip)' "$logs/$1/logs/seq13/throughput.txt"
    rm -rf "$logs/$1/logs"
    stamp "$1 done"
}
BEFORE=build/trees/before ALTERNATE=2 WIDE=1 SEQ_ROWS="$P:log $P:byte $P:log" chain before
BEFORE=build/trees/fill32 ALTERNATE=2 WIDE=0 SEQ_ROWS= chain fill32
gpu_replay_in_memory
for size in 128000000 256000000; do
    SET="PSA.conf:Neighbours:off PSA.conf:GPUPrune:byte" READER_BUFFER=$size KEEP_INPUT=1 CONF_ROWS= BEFORE= \
        ALTERNATE=0 WIDE=0 SEQ_ROWS="$P:byte" sh sample_runs/full_chain/throughput.sh "blocks$size" 910000 \
        > "$logs/blocks$size.out" 2>&1 || status=1
    grep -E '^\| (seq|pip)' "sample_runs/full_chain/blocks$size/throughput.txt"
    grep -hoE 'the GPU block on the device [0-9.]* s: upload and align [0-9.]*, fill [0-9.]*, search [0-9.]*' \
        sample_runs/full_chain/blocks$size/throughput-*.log
    tar -czf "$logs/blocks$size.tar.gz" -C sample_runs/full_chain "blocks$size"
    stamp "blocks of $size bytes done"
done
tar -czf "$out/blocks17.tar.gz" -C "$out" logs && rm -rf "$logs"
exit $status
