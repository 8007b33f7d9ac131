#!/bin/sh
# neighbours6-gpu.sh: on the GPU machine, Neighbours iterate's cost in the GPU block (issue 20, session 6): the build (this tree, and BEFORE's beside it), the GPU suites, the replay chain through throughput.sh (iterate and off, BEFORE's iterate), the PSA's device steps from its logs, the PSA's events of both trees compared, and with nsys on the machine a kernel summary of the iterate run.
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && [BEFORE=DIR] [CHECKS="check_psa ..."] sh sample_runs/psa/neighbours6-gpu.sh [EVENTS]
#   EVENTS: the replay chain's generator events (200000: about 430,000 crystal-events; its input in /dev/shm)
#   BEFORE: another tree's sources (built here in DIR/build) for before/after rows in the same run
# Prints the key lines; logs under $OUT (else build/neighbours6-gpu), packed into $OUT/logs.tar.gz.
set -u
events=${1:-200000}
out=${OUT:-build/neighbours6-gpu}
. "$(dirname "$0")/../gpu-common.sh"
gpu_prepare "$out/logs" 150
echo "profilers: $(command -v nsys ncu | tr '\n' ' ')"

gpu_replay_in_memory
CONF_ROWS="PSA.conf:Neighbours:off" sh sample_runs/full_chain/throughput.sh neighbours6 "$events" > /dev/null 2>&1 || status=1
gpu_show_chain sample_runs/full_chain/neighbours6 "$out/logs" '^\[PSA\] ([0-9]+ data:crystal|time in process_block)'
stamp "chain done"

# the PSA's events (output.adf) of this tree and BEFORE's, sequentially: the same bytes
for tree in ${BEFORE:+. "$BEFORE"}; do
    "$tree/build/bin/narwhal" run "$tree/topologies/replay_chain.xml" --actors "$tree/build/actors" \
        --conf "$tree/topologies/conf/replay_chain:$tree/topologies/conf" > /dev/null 2>&1 || status=1
    echo "$(md5sum < build/replay_chain/output.adf | cut -c1-32) output.adf of $tree" | tee -a "$out/logs/outputs.txt"
done
[ -z "${BEFORE:-}" ] || [ "$(cut -c1-32 "$out/logs/outputs.txt" | sort -u | wc -l)" = 1 ] || status=1

if command -v nsys > /dev/null 2>&1; then
    nsys profile --trace=cuda --sample=none --cpuctxsw=none -o "$out/logs/iterate" -f true \
        build/bin/narwhal run topologies/replay_chain.xml --actors build/actors \
        --conf topologies/conf/replay_chain:topologies/conf > "$out/logs/nsys-run.log" 2>&1 || status=1
    nsys stats --report cuda_gpu_kern_sum --format table "$out/logs/iterate.nsys-rep" > "$out/logs/nsys-kernels.txt" 2>&1
    rm -f "$out/logs/iterate.nsys-rep" "$out/logs/iterate.sqlite"
    head -n 40 "$out/logs/nsys-kernels.txt" | cut -c1-220
    stamp "nsys done"
fi
tar -czf "$out/logs.tar.gz" -C "$out" logs
rm -rf "$out/logs"
exit $status
