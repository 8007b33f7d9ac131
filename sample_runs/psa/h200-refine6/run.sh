#!/bin/sh
# run.sh: on the H200, one call: this tree (the refinement's searches seeded, few_tile's early stop) and BASE built side by side; check_psa, check_gridsearch, check_psa_local; the replay chain through both (throughput.sh with BEFORE, Neighbours iterate; then Neighbours off, sequential); bench-psa --rounds of both.
#   . ./.gpudeps/env.sh; cd build/snap-refine && sh sample_runs/psa/h200-refine6/run.sh ../base-refine [EVENTS]
#   results in $KEEP (build/refine6), tarred into $OUT/refine6.tgz when $OUT is set (after every step)
set -u
base=$(cd "${1:?usage: run.sh BASE-TREE [EVENTS]}" && pwd)
events=${2:-100000}
keep=${KEEP:-build/refine6}
mkdir -p "$keep"
keep=$(cd "$keep" && pwd)
t0=$(date +%s)
save() { [ -z "${OUT:-}" ] || tar -czf "$OUT/refine6.tgz" -C "$keep/.." "$(basename "$keep")"; }
lap() { echo "$1 after $(($(date +%s) - t0)) s"; save; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
actors="build/bin/narwhal build/actors/adf_reader.so build/actors/adf_writer.so build/actors/histo.so \
build/actors/tracker.so build/actors/builder.so build/actors/generator.so build/actors/psa.so build/bin/bench-psa"
tests="build/tests/check_psa build/tests/check_gridsearch build/tests/check_psa_local"
(cd "$base" && make -j6 NO_MPI=1 $actors > "$keep/base-build.log" 2>&1) &
base_build=$!
make -j10 NO_MPI=1 $actors $tests build/bin/basisgen > "$keep/build.log" 2>&1 &&
    make NO_MPI=1 build/cache/default.basis >> "$keep/build.log" 2>&1 || { tail -n 20 "$keep/build.log"; save; exit 1; }
lap built
BUILD=build timeout ${CHECK_S:-60} tests/run-checks.sh $tests > "$keep/check.log" 2>&1
echo "checks: exit $?"
tail -n 6 "$keep/check.log"
lap checks
wait $base_build || { tail -n 20 "$keep/base-build.log"; save; exit 1; }
mkdir -p "$base/build/cache" && ln -sfn "$(pwd)/build/cache/default.basis" "$base/build/cache/default.basis"
lap "base built"
work=build/replay_chain
mkdir -p /dev/shm/rc && ln -sfn /dev/shm/rc $work && mkdir -p "$work/conf-off"
BEFORE=$base sh sample_runs/full_chain/throughput.sh refine6 "$events" > /dev/null 2>&1
echo "throughput: exit $?"
cp sample_runs/full_chain/refine6/throughput.txt "$keep/" 2>/dev/null
for k in 1 2 3 4; do
    grep -E '^\[PSA\]' "sample_runs/full_chain/refine6/throughput-$k.log" > "$keep/throughput-$k.psa.txt" 2>/dev/null
done
grep -E '^\|' "$keep/throughput.txt"
grep -ho 'the GPU block on the device .*' "$keep"/throughput-*.psa.txt
lap throughput
sed 's/^Neighbours .*/Neighbours  off/' topologies/conf/PSA.conf > "$work/conf-off/PSA.conf"
chain() { # TREE LABEL: one sequential run of TREE's narwhal and actors, Neighbours off
    "$1/build/bin/narwhal" run "$1/topologies/replay_chain.xml" --actors "$1/build/actors" \
        --conf "$work/conf-off:$1/topologies/conf/replay_chain:$1/topologies/conf" > "$keep/chain-$2.log" 2>&1
    echo "$2: exit $?; $(grep -o 'time in process_block [0-9.]* s' "$keep/chain-$2.log"); $(grep -o 'search [0-9.]*, answer [0-9.]*, refine [0-9.]*' "$keep/chain-$2.log")"
    grep -E '^\[PSA\]|^blocks ran|^busiest' "$keep/chain-$2.log" > "$keep/chain-$2.psa.txt"
    rm -f "$keep/chain-$2.log"
}
chain "$base" base
chain . this
chain "$base" base2
chain . this2
lap chain
build/bin/bench-psa --basis build/cache/default.basis --searches 110000 --rounds 20 --cpu 16 --naive 1 --ladder 1 \
    > "$keep/rounds-this.txt" 2>&1
echo "rounds this: exit $?"
grep -E '^\| a block|same point|FAILED' "$keep/rounds-this.txt"
lap "rounds this"
"$base/build/bin/bench-psa" --basis build/cache/default.basis --searches 110000 --rounds 20 --cpu 16 --naive 1 --ladder 1 \
    > "$keep/rounds-base.txt" 2>&1
echo "rounds base: exit $?"
grep -E '^\| a block|same point|FAILED' "$keep/rounds-base.txt"
lap "rounds base"
