#!/bin/sh
# run.sh: on the H200, one call (session 9): the pruned full search's first step bounded against its own guess
# (GPUGuess on: call 1 a guess kernel before the tiles, guess_answers; call 2 on: guess_step in the tiles) beside the
# first step computed exactly (GPUGuess off): bench-psa's large batch (bits against the unpruned kernel and the CPU),
# the chain's batch sizes (--rounds), the Check suites of the search on the GPU, and the replay chain (Neighbours off,
# 64 MB blocks) sequential and pipelined with GPUGuess on, off and on again.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-guess9/run.sh [STEPS]
#   STEPS: any of bench rounds chain ncu (default: bench rounds chain); CHECKS: the suites run first
#   (default: check_gridsearch check_psa); EVENTS: generator events of the chain's input (910000); BEFORE=DIR: another
#   tree's sources, built beside this one, its sequential and pipelined chain rows added (throughput.sh's BEFORE);
#   SET: throughput.sh's (default PSA.conf:Neighbours:off; calls 5 and 6 added PSA.conf:GPUGuess:off)
# Logs under $OUT (else build/guess9), packed into $OUT/guess9.tar.gz.
set -u
steps=${1:-bench rounds chain}
# call 1 also ran CONF_ROWS with ADFReader.conf:Threads:16 and PSA.conf:Threads:16 (both slower sequentially)
out=${OUT:-build/guess9}
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_gridsearch check_psa}
gpu_prepare "$out/logs" 300
gpu_psa_steps "$out/logs"
if gpu_has ncu; then
    gpu_psa_ncu "$out/logs" ${MODES:-4}
fi
if gpu_has chain; then
    gpu_replay_in_memory
    label=guess9-chain
    SET="${SET-PSA.conf:Neighbours:off}" READER_BUFFER=64000000 KEEP_INPUT=1 \
        CONF_ROWS="${CONF_ROWS-PSA.conf:GPUGuess:off PSA.conf:GPUGuess:on}" WIDE=${WIDE-1} \
        sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
    mkdir -p "$out/logs/$label"
    gpu_show_chain "sample_runs/full_chain/$label" "$out/logs/$label" \
        'time in process_block|GPUGuess|^blocks ran|^(reader|psa[0-9]*|builder|tracker[0-9]*|histo|writer) '
    stamp "chain done"
fi
tar -czf "$out/guess9.tar.gz" -C "$out" logs
exit $status
