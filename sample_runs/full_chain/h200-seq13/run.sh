#!/bin/sh
# run.sh: on the H200, one call (session 13): the replay chain sequentially, this tree's rows alternating with the
# tree before (BEFORE, its sources under build/trees), the host's actors' thread counts as extra rows; the Check
# suites first.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-seq13/run.sh
#   BEFORE: the other tree (default build/trees/before); ALTERNATE: pairs of sequential rows (default 3);
#   SEQ_ROWS, WIDE, WIDE_ROWS: throughput.sh's; CHECKS: the suites (default: check_psa check_gridsearch);
#   EVENTS: generator events of the input (910,000: 1,957,087 crystal-events); PRUNE: GPUPrune (byte);
#   BENCH=1: bench-psa's large batch first (gpu_psa_bench: logs/bench.txt).
# Logs under $OUT (else build/seq13), packed into $OUT/seq13.tar.gz.
set -u
out=${OUT:-build/seq13}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_psa check_gridsearch}
BEFORE=${BEFORE-build/trees/before}
gpu_begin "$logs"
gpu_describe "$logs"
gpu_build_beside "$logs" "$start"
stamp "built: this tree and ${BEFORE:-no other}"
gpu_checks "$logs" 300 $CHECKS
stamp "checks done"
if [ "${BENCH:-0}" = 1 ]; then gpu_psa_bench "$logs"; fi
gpu_replay_in_memory
label=seq13
SET="PSA.conf:Neighbours:off PSA.conf:GPUPrune:${PRUNE:-byte}" READER_BUFFER=64000000 KEEP_INPUT=1 CONF_ROWS= \
    BEFORE=$BEFORE ALTERNATE=${ALTERNATE:-3} WIDE=${WIDE:-1} SEQ_ROWS="${SEQ_ROWS-}" \
    sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > "$logs/throughput.out" 2>&1 || status=1
mkdir -p "$logs/$label"
gpu_show_chain "sample_runs/full_chain/$label" "$logs/$label" \
    'time in process_block|^blocks ran|large reads|I/O thread|the emulator|^(reader|psa|builder|tracker|histo|writer) '
stamp "chain done"
tar -czf "$out/seq13.tar.gz" -C "$out" logs
exit $status
