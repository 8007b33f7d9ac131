#!/bin/sh
# chain-variants.sh: on the H200, one call: the replay chain (Neighbours off, sequential) through the base tree's PSA and through PSA builds of this tree with kFew, kApartMin set in patched copies of its kernel: each run's device steps (the search step's seconds).
#   . ./.gpudeps/env.sh; cd build/snap-search && sh sample_runs/psa/h200-search6/chain-variants.sh ../base-search [EVENTS]
#   VARIANTS: FEW:APART pairs; results in $KEEP (build/search6v), tarred into $OUT/search6v.tgz when $OUT is set
set -u
base=$(cd "${1:?usage: chain-variants.sh BASE-TREE [EVENTS]}" && pwd)
events=${2:-100000}
keep=${KEEP:-build/search6v}
mkdir -p "$keep"
keep=$(cd "$keep" && pwd)
t0=$(date +%s)
save() { [ -z "${OUT:-}" ] || tar -czf "$OUT/search6v.tgz" -C "$keep/.." "$(basename "$keep")"; }
actors="build/bin/narwhal build/actors/adf_reader.so build/actors/adf_writer.so build/actors/histo.so \
build/actors/tracker.so build/actors/builder.so build/actors/generator.so build/actors/psa.so"
make -j10 NO_MPI=1 $actors build/bin/basisgen > "$keep/build.log" 2>&1 &
this_build=$!
(cd "$base" && make -j6 NO_MPI=1 $actors > "$keep/base-build.log" 2>&1) &
base_build=$!
wait $this_build && wait $base_build && make NO_MPI=1 build/cache/default.basis >> "$keep/build.log" 2>&1 ||
    { tail -n 20 "$keep/build.log" "$keep/base-build.log"; save; exit 1; }
echo "built after $(($(date +%s) - t0)) s"
work=build/replay_chain
mkdir -p /dev/shm/rc && ln -sfn /dev/shm/rc $work && mkdir -p "$work/input-conf" "$work/conf-off" "$work/conf-noprune"
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/input-conf/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/input-conf/ADFWriter.conf"
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf "$work/input-conf:topologies/conf" \
    > "$keep/input.log" 2>&1 || { tail -n 5 "$keep/input.log"; save; exit 1; }
sed 's/^Neighbours .*/Neighbours  off/' topologies/conf/PSA.conf > "$work/conf-off/PSA.conf"
sed 's/^GPUPrune .*/GPUPrune    off/' "$work/conf-off/PSA.conf" > "$work/conf-noprune/PSA.conf"
echo "input after $(($(date +%s) - t0)) s"
# chain TREE LABEL [CONF]: one sequential run of TREE's narwhal and actors, Neighbours off
chain() {
    "$1/build/bin/narwhal" run "$1/topologies/replay_chain.xml" --actors "$1/build/actors" \
        --conf "$work/${3:-conf-off}:$1/topologies/conf/replay_chain:$1/topologies/conf" > "$keep/chain-$2.log" 2>&1
    echo "$2: exit $?; $(grep -o 'fill [0-9.]*, search [0-9.]*' "$keep/chain-$2.log"); $(grep -o 'time in process_block [0-9.]* s' "$keep/chain-$2.log")"
}
chain "$base" base
chain . this
chain . this-prune-off conf-noprune
cp kernels/gridsearch.cu build/gridsearch.cu.tree
for v in ${VARIANTS:-4:99999999 8:1536 8:99999999 0:1536}; do
    few=${v%%:*} apart=${v#*:}
    sed -e "s|^constexpr uint32_t kFew = [0-9]*;|constexpr uint32_t kFew = $few;|" \
        -e "s|^constexpr size_t kApartMin = [0-9]*;|constexpr size_t kApartMin = $apart;|" build/gridsearch.cu.tree \
        > kernels/gridsearch.cu
    make NO_MPI=1 build/actors/psa.so >> "$keep/build.log" 2>&1 && chain . "few$few-apart$apart"
done
cp build/gridsearch.cu.tree kernels/gridsearch.cu
chain "$base" base-again
echo "done after $(($(date +%s) - t0)) s"
save
