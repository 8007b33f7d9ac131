#!/bin/sh
# run.sh: on the H200, one call: this tree and a base tree built side by side; bench-psa --rounds (the replay chain's batch sizes) on both; the replay chain (throughput.sh, Neighbours iterate and off) with the base tree's rows beside it; this tree's GPU suites.
#   device command (from snapshots of the two trees: README.md):
#     . ./.gpudeps/env.sh; cd build/snap-search && sh sample_runs/psa/h200-search6/run.sh ../base-search [EVENTS] [STEPS]
#   EVENTS: generator events of the replay input (200000); STEPS: any of rounds variants large chain check (default: all);
#   results in $KEEP (build/search6): the logs, tarred into $OUT/search6.tgz when $OUT is set
set -u
base=$(cd "${1:?usage: run.sh BASE-TREE [EVENTS] [STEPS]}" && pwd)
events=${2:-200000}
steps=${3:-rounds variants large chain check}
keep=${KEEP:-build/search6}
mkdir -p "$keep"
keep=$(cd "$keep" && pwd)
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
save() { [ -z "${OUT:-}" ] || tar -czf "$OUT/search6.tgz" -C "$keep/.." "$(basename "$keep")"; }
lap() { echo "$1 after $(($(date +%s) - t0)) s"; save; }
finish() { save; exit "$1"; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee "$keep/gpu.txt"
lscpu | grep -E 'Model name|^CPU\(s\)' >> "$keep/gpu.txt"
actors="build/actors/adf_reader.so build/actors/adf_writer.so build/actors/histo.so build/actors/histo_sink.so \
build/actors/tracker.so build/actors/builder.so build/actors/generator.so build/actors/psa.so"
# the same bench in both trees: --rounds uses no interface the base lacks
cp tools/bench_psa.c "$base/tools/bench_psa.c"
make -j10 NO_MPI=1 build-tests build/bin/bench-psa build/bin/bench-machine > "$keep/build.log" 2>&1 &
this_build=$!
(cd "$base" && make -j6 NO_MPI=1 build/bin/narwhal $actors build/bin/bench-psa > "$keep/base-build.log" 2>&1) &
base_build=$!
wait $this_build || { tail -n 30 "$keep/build.log"; finish 1; }
wait $base_build || { tail -n 30 "$keep/base-build.log"; finish 1; }
make NO_MPI=1 build/cache/default.basis >> "$keep/build.log" 2>&1 || { tail -n 5 "$keep/build.log"; finish 1; }
grep -E 'warning|error' "$keep/build.log" "$keep/base-build.log" | head -n 10
lap built
bench() { # bench BINARY LABEL: the replay chain's batches, 40 blocks
    "$1" --basis build/cache/default.basis --searches 262144 --rounds 40 --cpu 16 --naive 1 --ladder 1 \
        > "$keep/rounds-$2.txt" 2>&1
    echo "rounds $2: exit $?"
    grep -E '^bench-psa: rounds|^\| (2059|1130|850|320|100|12|a block) |same point|FAILED' "$keep/rounds-$2.txt"
}
if has rounds; then
    bench "$base/build/bin/bench-psa" base
    bench build/bin/bench-psa this
    lap rounds
fi
# kFew, kApartMin and kFewRun set in patched copies of this tree's kernel (VARIANTS: FEW:APART:RUN triples)
if has variants; then
    cuda=$(dirname "$(dirname "$(command -v nvcc)")")
    for v in ${VARIANTS:-0:99999999:10 4:99999999:10 8:1536:10 4:0:10}; do
        few=${v%%:*} rest=${v#*:}
        apart=${rest%%:*} run=${rest#*:}
        sed -e "s|^constexpr uint32_t kFew = [0-9]*;|constexpr uint32_t kFew = $few;|" \
            -e "s|^constexpr size_t kApartMin = [0-9]*;|constexpr size_t kApartMin = $apart;|" \
            -e "s|^constexpr int kFewRun = [0-9]*;|constexpr int kFewRun = $run;|" kernels/gridsearch.cu \
            > build/gs_variant.cu
        nvcc -O3 -std=c++17 -arch=sm_90 -DNARWHAL_HAVE_CUDA=1 -Iadf -Iactors -Iactors/kit -Idetector -Ikernels \
            -c build/gs_variant.cu -o build/gs_variant.o &&
            cc -fopenmp -o build/bench-psa-variant build/obj/tools/bench_psa.o build/obj/tools/bench_limits.o \
                build/gs_variant.o build/obj/kernels/psa_block.o build/obj/kernels/gpu_device.o build/lib/libpsa.a \
                build/lib/libdetector.a build/lib/libadf.a -lxml2 -L"$cuda/lib64" -lcudart_static -ldl -lrt \
                -lpthread -lstdc++ -lm &&
            bench build/bench-psa-variant "few$few-apart$apart-run$run"
    done
    lap variants
fi
# a large batch (bench-psa's figures: 262,144 searches in chunks of 32,768), this tree only
if has large; then
    build/bin/bench-psa --basis build/cache/default.basis --searches 262144 --cpu 4096 --naive 10 --ladder 16 \
        --check > "$keep/large-this.txt" 2>&1
    echo "large: exit $?"
    grep -E '^\| GPU|same point' "$keep/large-this.txt" | grep -E 'GPU' | head -n 20
    lap large
fi
if has chain; then
    mkdir -p /dev/shm/rc && ln -sfn /dev/shm/rc build/replay_chain
    BEFORE=$base CONF_ROWS="PSA.conf:Neighbours:off" timeout ${CHAIN_S:-150} sh sample_runs/full_chain/throughput.sh search6 "$events" \
        > "$keep/throughput-run.log" 2>&1
    echo "throughput.sh: exit $?"
    # the base tree with Neighbours off too
    work=build/replay_chain
    mkdir -p "$work/conf-before-off"
    sed 's/^Neighbours .*/Neighbours  off/' "$base/topologies/conf/PSA.conf" > "$work/conf-before-off/PSA.conf"
    for mode in sequential pipelined; do
        opt=
        [ $mode = pipelined ] && opt=--pipeline
        "$base/build/bin/narwhal" run "$base/topologies/replay_chain.xml" --actors "$base/build/actors" \
            --conf "$work/conf-before-off:$base/topologies/conf/replay_chain:$base/topologies/conf" $opt \
            > "sample_runs/full_chain/search6/before-off-$mode.log" 2>&1
        echo "before, Neighbours off, $mode: exit $?"
    done
    cp -r sample_runs/full_chain/search6 "$keep/chain"
    cat "$keep/chain/throughput.txt" | head -n 14
    for f in "$keep"/chain/throughput-[0-9]*.log "$keep"/chain/before-off-*.log; do
        echo "$(basename "$f"): $(grep -o 'the GPU block on the device.*' "$f")"
    done
    lap chain
fi
if has check; then
    BUILD=build timeout ${CHECK_S:-150} tests/run-checks.sh build/tests/check_psa build/tests/check_gridsearch \
        build/tests/check_psa_local build/tests/check_gpu > "$keep/check.log" 2>&1
    echo "checks: exit $?"
    tail -n 12 "$keep/check.log"
    lap check
fi
finish 0
