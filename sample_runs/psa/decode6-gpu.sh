#!/bin/sh
# decode6-gpu.sh: on the GPU machine, the PSA's host prefix, copying and decoding a block (issue 20, session 6): copy_rate's figures (h200-decode6/copy_rate.c, built on this side and carried), the build (this tree, BEFORE's beside it), the replay chain through throughput.sh (this tree with pinned buffers, Neighbours off, BEFORE's rows) and two --strict rows (plain buffers, as a NARVAL host's: the copy path, sequential and pipelined), then the GPU suites.
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && BEFORE=DIR COPY_RATE=BIN sh sample_runs/psa/decode6-gpu.sh [EVENTS]
#   EVENTS: the replay chain's generator events (200000: about 430,000 crystal-events; its input in /dev/shm)
# Logs under $OUT (else build/decode6-gpu), packed into $OUT/chain.tar.gz and $OUT/checks.tar.gz as they are done.
set -u
events=${1:-200000}
out=${OUT:-build/decode6-gpu}
. "$(dirname "$0")/../gpu-common.sh"
gpu_open "$out/logs"

if [ -n "${COPY_RATE:-}" ]; then
    "$COPY_RATE" 32 > "$out/logs/copy_rate.txt" 2>&1 || status=1
    cat "$out/logs/copy_rate.txt"
    stamp "copy_rate done"
fi

gpu_replay_in_memory
CONF_ROWS="PSA.conf:Neighbours:off" sh sample_runs/full_chain/throughput.sh decode6 "$events" > /dev/null 2>&1 || status=1
keep=sample_runs/full_chain/decode6
conf=topologies/conf/replay_chain:topologies/conf
# the copy path of this tree: --strict hands plain buffers, as a NARVAL host does
build/bin/narwhal run topologies/replay_chain.xml --actors build/actors --conf "$conf" --strict \
    > "$keep/strict-sequential.log" 2>&1 || status=1
build/bin/narwhal run topologies/replay_chain.xml --actors build/actors --conf "$conf" --strict --pipeline \
    > "$keep/strict-pipelined.log" 2>&1 || status=1
lines='^\[PSA\] time in process_block|^blocks ran|^busiest actor'
gpu_show_chain "$keep" "$out/logs" "$lines"
for f in "$keep"/strict-*.log; do
    echo "== $(basename "$f")"
    grep -E "$lines" "$f" | cut -c1-900
done
tar -czf "$out/chain.tar.gz" -C "$out" logs
stamp "chain done"

rm -rf "$out/logs" && mkdir -p "$out/logs"
for suite in ${CHECKS:-check_psa check_gpu check_psa_local check_pipeline}; do
    BUILD=build timeout 150 tests/run-checks.sh "build/tests/$suite" > "$out/logs/$suite.txt" 2>&1 &
done
wait
for suite in ${CHECKS:-check_psa check_gpu check_psa_local check_pipeline}; do
    grep -E 'Checks|:[EF]:|passed' "$out/logs/$suite.txt" | head -n 8
    grep -q ' 0 failed' "$out/logs/$suite.txt" || status=1
done
tar -czf "$out/checks.tar.gz" -C "$out" logs
rm -rf "$out/logs"
stamp "checks done"
exit $status
