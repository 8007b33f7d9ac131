#!/bin/sh
# neighbours-local-gpu.sh: on the GPU machine, in a snapshot of the tree, the neighbour passes' local searches (NeighbourRadius, issue 15 item 2): check_psa and check_psa_local (GPU against CPU), the replay chain's PSA sequentially with NeighbourRadius 6 (the default), 0 (the passes' searches over whole segments, as before) and Neighbours off, then psa-pairs' events through the GPU block and the CPU (same bytes, accuracy by class).
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && sh sample_runs/psa/neighbours-local-gpu.sh [EVENTS]
#   EVENTS: the replay chain's generator events (300000: about 650,000 crystal-events; its input in /dev/shm)
# Prints the key lines; logs under $OUT (else build/neighbours-local-gpu).
set -u
events=${1:-300000}
out=${OUT:-build/neighbours-local-gpu}
. "$(dirname "$0")/../gpu-common.sh"
CHECKS=${CHECKS:-check_psa check_psa_local}
gpu_prepare "$out" 150

# the replay chain's PSA: its input in /dev/shm, one sequential run per setting
gpu_replay_in_memory
mkdir -p build/replay_chain/input-conf
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > build/replay_chain/input-conf/Generator.conf
printf 'File %s\n' build/replay_chain/input.adf > build/replay_chain/input-conf/ADFWriter.conf
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf build/replay_chain/input-conf:topologies/conf \
    > "$out/chain-input.log" 2>&1 || status=1
stamp "chain input written"
for row in "radius6:NeighbourRadius 6" "radius0:NeighbourRadius 0" "off:Neighbours off"; do
    tag=${row%%:*} set=${row#*:}
    key=${set%% *}
    dir=build/replay_chain/conf-$tag
    mkdir -p "$dir"
    sed "/^$key /d" topologies/conf/PSA.conf > "$dir/PSA.conf"
    echo "$set" >> "$dir/PSA.conf"
    timeout 120 build/bin/narwhal run topologies/replay_chain.xml --actors build/actors \
        --conf "$dir:topologies/conf/replay_chain:topologies/conf" > "$out/chain-$tag.log" 2>&1 || status=1
    echo "== replay chain, sequential, $set"
    grep -E '^\[PSA\] ([0-9]+ data:crystal|time in process_block)' "$out/chain-$tag.log"
done
stamp "chain done"

# psa-pairs' 4,000 crystals through the GPU block and the CPU's 16 threads: the same bytes
for dev in gpu cpu; do
    BUILD=build timeout 60 sh sample_runs/psa/pairs.sh "h200-local-pairs-$dev" 4000 0 "$dev" > "$out/pairs-$dev.txt" 2>&1 || status=1
done
for mode in off iterate; do
    a=build/psa-sample/h200-local-pairs-gpu/$mode/output.adf b=build/psa-sample/h200-local-pairs-cpu/$mode/output.adf
    cmp -s "$a" "$b" && echo "psa-pairs, Neighbours $mode: GPU block and CPU give the same bytes" \
        || { echo "psa-pairs, Neighbours $mode: GPU block and CPU DIFFER"; status=1; }
done
grep -A 8 '== Neighbours iterate' "$out/pairs-gpu.txt"
cp -r sample_runs/psa/h200-local-pairs-gpu "$out/" 2>/dev/null
stamp "total"
exit $status
