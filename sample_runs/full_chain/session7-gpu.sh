#!/bin/sh
# session7-gpu.sh: on the GPU machine, the replay chain's rows that session 6 did not measure: Neighbours off with several PSA and tracker instances, and each row again with larger reader blocks.
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && [CHECKS="check_psa ..."] [BLOCKS="16000000 64000000"] [PSAS=3] [TRACKERS=2] [MODES="off iterate"] sh sample_runs/full_chain/session7-gpu.sh [EVENTS]
#   EVENTS: generator events of the replay input (910000: the 1,957,087 crystal-events of PERF.md's session-5 and -6 rows)
#   For each reader buffer of BLOCKS and each Neighbours mode of MODES: throughput.sh's sequential and pipelined rows, then PSAS
#   PSA instances with TRACKERS tracker instances (pipelined), the input made once in /dev/shm.
#   SET="FILE:KEY:VALUE ..." changes those keys in every row (throughput.sh's SET, after the mode's Neighbours), TAG names
#   such a call's logs (session7-TAG-MODE-SIZE); the script may run again in one device call (the build is kept).
# Logs under $OUT (else build/session7-gpu), packed into $OUT/session7.tar.gz.
set -u
events=${1:-910000}
out=${OUT:-build/session7-gpu}
. "$(dirname "$0")/../gpu-common.sh"
gpu_prepare "$out/logs" 200

gpu_replay_in_memory
for mode in ${MODES:-off}; do
    for size in ${BLOCKS:-16000000 64000000}; do
        label=session7-${TAG:+$TAG-}$mode-$size
        SET="PSA.conf:Neighbours:$mode${SET:+ $SET}" READER_BUFFER=$size KEEP_INPUT=1 PSAS=${PSAS-3} \
            TRACKERS=${TRACKERS-2} sh sample_runs/full_chain/throughput.sh "$label" "$events" > /dev/null 2>&1 || status=1
        keep=sample_runs/full_chain/$label
        mkdir -p "$out/logs/$label"
        cp "$keep"/* "$out/logs/$label/"
        echo "== ${TAG:+$TAG: }Neighbours $mode, reader buffer $size${SET:+, $SET}${OMP_WAIT_POLICY:+, OMP_WAIT_POLICY=$OMP_WAIT_POLICY}"
        grep -E '^(\||ratio)' "$keep/throughput.txt"
        for f in "$keep"/throughput-[0-9]*.log; do
            echo "-- $(basename "$f"): $(grep -E '^busiest actor' "$f")"
            grep -E '^(reader|psa[0-9]*|tracker[0-9]*|histo) ' "$f" | awk '{ printf "%s %s/%s/%s  ", $1, $8, $10, $11 } END { print "" }'
        done
        stamp "Neighbours $mode, $size done"
    done
done
tar -czf "$out/session7.tar.gz" -C "$out" logs
exit $status
