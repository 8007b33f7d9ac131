#!/bin/sh
# the final tree on the GPU machine: build, check_psa + check_pipeline + check_gpu, a replay chain of 20,000 events (pinned, and --strict)
set -u
start=$(date +%s)
out=${OUT:-/tmp/v}; mkdir -p "$out"
make -j16 NO_MPI=1 all build-tests > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
mkdir -p build/cache; [ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis >> "$out/build.log" 2>&1
echo "[$(($(date +%s) - start)) s] built"
for s in check_psa check_pipeline check_gpu; do BUILD=build timeout 80 tests/run-checks.sh build/tests/$s > "$out/$s.txt" 2>&1 & done
mkdir -p /dev/shm/rc build/replay_chain/input-conf && w=build/replay_chain
sed -e "s|^Events .*|Events     20000|" topologies/conf/full_chain/Generator.conf > $w/input-conf/Generator.conf
printf 'File %s\n' "$w/input.adf" > $w/input-conf/ADFWriter.conf
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf "$w/input-conf:topologies/conf" > "$out/input.log" 2>&1
c=topologies/conf/replay_chain:topologies/conf
build/bin/narwhal run topologies/replay_chain.xml --actors build/actors --conf $c > "$out/pinned.log" 2>&1; echo "pinned rc=$?"
cp $w/output.adf $w/pinned.adf
build/bin/narwhal run topologies/replay_chain.xml --actors build/actors --conf $c --strict > "$out/strict.log" 2>&1; echo "strict rc=$?"
cmp $w/output.adf $w/pinned.adf && echo "pinned and --strict outputs identical ($(stat -c %s $w/output.adf) bytes)"
grep -h "time in process_block\|blocks ran" "$out/pinned.log" "$out/strict.log" | cut -c1-420
wait
for s in check_psa check_pipeline check_gpu; do tail -1 "$out/$s.txt"; grep ":[EF]:" "$out/$s.txt" | head -3; done
echo "[$(($(date +%s) - start)) s] done"
