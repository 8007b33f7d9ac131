#!/bin/sh
# session6-gpu.sh: on the GPU machine, issue 20's figures at the end of session 6: the build (this tree, and BEFORE's beside it), the GPU suites, bench-psa's large batches, then the replay chain (throughput.sh: this tree's default and Neighbours off, sequential and pipelined, 3 PSA instances with 2 trackers, BEFORE's default rows on the same input).
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && BEFORE=DIR [CHECKS="check_psa ..."] sh sample_runs/full_chain/session6-gpu.sh [EVENTS]
#   EVENTS: generator events of the replay input (910000: the 1,957,087 crystal-events of PERF.md's session-5 rows)
# Logs under $OUT (else build/session6-gpu), packed into $OUT/session6.tar.gz.
set -u
events=${1:-910000}
out=${OUT:-build/session6-gpu}
. "$(dirname "$0")/../gpu-common.sh"
gpu_prepare "$out/logs" 200

if [ "${BENCH:-1}" = 1 ]; then
    timeout 120 build/bin/bench-psa --searches 262144 --cpu 4096 --naive 64 --ladder 256 --check \
        > "$out/logs/bench-psa.txt" 2>&1 || status=1
    grep -E 'GPU|ratio' "$out/logs/bench-psa.txt" | head -n 16
    stamp "bench-psa done"
fi

gpu_replay_in_memory
CONF_ROWS="PSA.conf:Neighbours:off" PSAS=${PSAS-3} TRACKERS=${TRACKERS-2} \
    sh sample_runs/full_chain/throughput.sh session6 "$events" > /dev/null 2>&1 || status=1
gpu_show_chain sample_runs/full_chain/session6 "$out/logs" '^\[PSA[#0-9]*\] time in process_block'
stamp "chain done"
tar -czf "$out/session6.tar.gz" -C "$out" logs
exit $status
