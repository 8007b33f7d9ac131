#!/bin/sh
# final.sh: on the H200, one call, the tree to commit: its GPU suites; bench-psa --rounds (the replay chain's batch sizes, bits against one large batch); the replay chain (Neighbours off, sequential) through the base tree's PSA and through this one.
#   . ./.gpudeps/env.sh; cd build/snap-search && sh sample_runs/psa/h200-search6/final.sh ../base-search [EVENTS]
#   results in $KEEP (build/search6f), tarred into $OUT/search6f.tgz when $OUT is set
set -u
base=$(cd "${1:?usage: final.sh BASE-TREE [EVENTS]}" && pwd)
events=${2:-100000}
keep=${KEEP:-build/search6f}
mkdir -p "$keep"
keep=$(cd "$keep" && pwd)
t0=$(date +%s)
save() { [ -z "${OUT:-}" ] || tar -czf "$OUT/search6f.tgz" -C "$keep/.." "$(basename "$keep")"; }
lap() { echo "$1 after $(($(date +%s) - t0)) s"; save; }
actors="build/bin/narwhal build/actors/adf_reader.so build/actors/adf_writer.so build/actors/histo.so \
build/actors/tracker.so build/actors/builder.so build/actors/generator.so build/actors/psa.so"
tests="build/tests/check_psa build/tests/check_gridsearch build/tests/check_psa_local build/tests/check_gpu"
(cd "$base" && make -j6 NO_MPI=1 $actors > "$keep/base-build.log" 2>&1) &
base_build=$!
make -j10 NO_MPI=1 $actors $tests build/bin/bench-psa build/bin/basisgen > "$keep/build.log" 2>&1 &&
    make NO_MPI=1 build/cache/default.basis >> "$keep/build.log" 2>&1 || { tail -n 20 "$keep/build.log"; save; exit 1; }
lap built
BUILD=build timeout ${CHECK_S:-45} tests/run-checks.sh $tests > "$keep/check.log" 2>&1
echo "checks: exit $?"
tail -n 12 "$keep/check.log"
lap checks
build/bin/bench-psa --basis build/cache/default.basis --searches 110000 --rounds 20 --cpu 16 --naive 1 --ladder 1 \
    > "$keep/rounds-this.txt" 2>&1
echo "rounds: exit $?"
grep -E '^\| a block|same point|FAILED' "$keep/rounds-this.txt"
lap rounds
wait $base_build || { tail -n 20 "$keep/base-build.log"; save; exit 1; }
work=build/replay_chain
mkdir -p /dev/shm/rc && ln -sfn /dev/shm/rc $work && mkdir -p "$work/input-conf" "$work/conf-off"
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/input-conf/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/input-conf/ADFWriter.conf"
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf "$work/input-conf:topologies/conf" \
    > "$keep/input.log" 2>&1 || { tail -n 5 "$keep/input.log"; save; exit 1; }
sed 's/^Neighbours .*/Neighbours  off/' topologies/conf/PSA.conf > "$work/conf-off/PSA.conf"
chain() { # TREE LABEL: one sequential run of TREE's narwhal and actors, Neighbours off
    "$1/build/bin/narwhal" run "$1/topologies/replay_chain.xml" --actors "$1/build/actors" \
        --conf "$work/conf-off:$1/topologies/conf/replay_chain:$1/topologies/conf" > "$keep/chain-$2.log" 2>&1
    echo "$2: exit $?; $(grep -o 'fill [0-9.]*, search [0-9.]*' "$keep/chain-$2.log"); $(grep -o 'time in process_block [0-9.]* s' "$keep/chain-$2.log")"
}
chain "$base" base
chain . this
lap chain
