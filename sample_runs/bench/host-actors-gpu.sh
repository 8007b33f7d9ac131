#!/bin/sh
# host-actors-gpu.sh: on the GPU machine, the host-side actors in sequential mode (issue 20, session 6): the build (this tree, BEFORE's beside it), host-actors.sh (this tree against BEFORE: reader, builder, tracker, histo, writer and the emulator's own seconds on the PSA's output of the replay input, then the traces read by a reader alone, also at ADFReader Threads 4, 8 and 16), the replay chain through throughput.sh with Neighbours off (this tree; rows with ADFReader Threads 4 and Histo Threads 1: the pipelined risk of the new defaults), then check_histo (GPU counts equal CPU counts) and check_io.
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && BEFORE=DIR sh sample_runs/bench/host-actors-gpu.sh [EVENTS]
#   EVENTS: generator events (910000: the 1,957,087 crystal-events of PERF.md's session-5 rows; 200000 for a quicker look)
# Logs under $OUT (else build/host-actors-gpu), packed into $OUT/host.tar.gz.
set -u
events=${1:-910000}
out=${OUT:-build/host-actors-gpu}
. "$(dirname "$0")/../gpu-common.sh"
gpu_open "$out/logs"

work=/dev/shm/narwhal-host-actors
WORK=$work RUNS=3 THREADS="4 8 16" TRACE_REPEAT=1 sh sample_runs/bench/host-actors.sh "$events" 1 \
    > "$out/logs/host-actors.txt" 2>&1 || status=1
cat "$out/logs/host-actors.txt"
cp "$work"/*.log "$work"/*.tsv "$out/logs/" 2>/dev/null
rm -rf "$work" # its input (15 GB at 910000 events) leaves room for the chain's
stamp "host actors done"

mkdir -p /dev/shm/rc build/host-noff
ln -sfn /dev/shm/rc build/replay_chain
sed 's/^Neighbours .*/Neighbours off/' topologies/conf/PSA.conf > build/host-noff/PSA.conf
# BEFORE's rows there would run its own configuration (Neighbours iterate): host-actors.sh compared the trees
BEFORE= EXTRA_CONF=build/host-noff CONF_ROWS="ADFReader.conf:Threads:4 Histo.conf:Threads:1" \
    sh sample_runs/full_chain/throughput.sh host6 "$events" > /dev/null 2>&1 || status=1
gpu_show_chain sample_runs/full_chain/host6 "$out/logs" '^(reader|psa|builder|tracker|histo|writer) |^blocks ran'
rm -rf /dev/shm/rc
stamp "chain done"

BUILD=build timeout 200 tests/run-checks.sh build/tests/check_histo build/tests/check_io > "$out/logs/checks.txt" 2>&1
grep -E 'Checks|:[EF]:|SKIP|passed' "$out/logs/checks.txt"
grep -q ' 0 failed' "$out/logs/checks.txt" || status=1
tar -czf "$out/host.tar.gz" -C "$out" logs
rm -rf "$out/logs"
stamp "checks done"
exit $status
