#!/bin/sh
# run.sh: on the H200, one call (session 10): the reader's ReadAhead (default on) beside ReadAhead off, and guess_step
# only in steps that hold coarse columns (GPUGuess on) beside GPUGuess off, in the replay chain (Neighbours off,
# 64 MB blocks) sequential and pipelined and replay_chain_wide.xml; bench-psa's large batch and --rounds; the Check
# suites of the search and of the files on the GPU first.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-ahead10/run.sh [STEPS]
#   STEPS: any of bench rounds chain wideoff (default: bench rounds chain); CHECKS: the suites run first; EVENTS: generator events of
#   the chain's input (910000); CONF_ROWS, SEQ_ROWS, WIDE, WIDE_ROWS: throughput.sh's (defaults below); BEFORE=DIR: another tree's rows.
# Logs under $OUT (else build/ahead10), packed into $OUT/ahead10.tar.gz.
set -u
steps=${1:-bench rounds chain}
out=${OUT:-build/ahead10}
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_gridsearch check_psa check_io check_adf_file}
gpu_prepare "$out/logs" 300
# call 7: SEQ_ROWS="ADFReader.conf:ReadAhead:off ADFReader.conf:ReadAhead:on" twice, WIDE=0, WIDE_ROWS the same
# (calls 4-5: perf record of a sequential chain; call 6 and 7: the reader's split, ReadAhead off / on alternating)
# call 3: SEQ_ROWS="ADFReader.conf:Threads:16 ADFReader.conf:ReadAhead:on" twice, OFF_SEQ_ROWS="ADFReader.conf:Threads:16", WIDE=0
# call 1: CONF_ROWS="ADFReader.conf:ReadAhead:off PSA.conf:GPUGuess:on ADFReader.conf:ReadAhead:on", no SEQ_ROWS
seq_rows="ADFReader.conf:ReadAhead:off ADFReader.conf:ReadAhead:on ADFReader.conf:ReadAhead:off \
ADFReader.conf:ReadAhead:on ADFReader.conf:ReadAhead:off env:OMP_WAIT_POLICY:passive ADFReader.conf:ReadAhead:on"
show='time in process_block|ReadAhead|^blocks ran|^(reader|psa[0-9]*|builder|tracker[0-9]*|histo|writer) '
gpu_psa_steps "$out/logs"
if gpu_has chain; then
    gpu_replay_in_memory
    label=ahead10-chain
    SET="${SET-PSA.conf:Neighbours:off}" READER_BUFFER=64000000 KEEP_INPUT=1 CONF_ROWS="${CONF_ROWS-}" \
        SEQ_ROWS="${SEQ_ROWS-$seq_rows}" WIDE=${WIDE-2} WIDE_ROWS="${WIDE_ROWS-}" \
        sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
    mkdir -p "$out/logs/$label"
    gpu_show_chain "sample_runs/full_chain/$label" "$out/logs/$label" "$show"
    stamp "chain done"
fi
# wideoff: the same input's sequential, pipelined, OFF_SEQ_ROWS and WIDE rows with ReadAhead off in every row
if gpu_has wideoff; then
    gpu_replay_in_memory
    label=ahead10-off
    SET="${SET-PSA.conf:Neighbours:off} ADFReader.conf:ReadAhead:off" READER_BUFFER=64000000 KEEP_INPUT=1 \
        SEQ_ROWS="${OFF_SEQ_ROWS-}" WIDE=${WIDE-2} sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
    mkdir -p "$out/logs/$label"
    gpu_show_chain "sample_runs/full_chain/$label" "$out/logs/$label" "$show"
    stamp "wideoff done"
fi
tar -czf "$out/ahead10.tar.gz" -C "$out" logs
exit $status
