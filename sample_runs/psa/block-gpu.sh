#!/bin/sh
# block-gpu.sh: on the GPU machine, the PSA's GPU block (GPUWork block) against the CPU and against the searches-only GPU path on realistic events (byte-identical outputs), check_psa, then the replay chain's throughput.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/psa/block-gpu.sh LABEL [EVENTS] [STEPS]
#   STEPS: any of check equal throughput threads (default: the first three)
set -u
label=${1:-gpu}
events=${2:-400000}
steps=${3:-check equal throughput}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
out=${OUT:-build/block-gpu}
work=build/block-gpu-work
mkdir -p "$out" "$work"
start=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
if ! make -j16 build-all build-tests > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
fi
grep -E 'warning|error' "$out/build.log" | head -n 20
mkdir -p build/cache
[ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis >> "$out/build.log" 2>&1
echo "build and basis: $(($(date +%s) - start)) s"
status=0
if has check; then
    BUILD=build timeout 300 build/tests/check_psa > "$out/check_psa.txt" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|skipped' "$out/check_psa.txt" | head -n 12
fi
# psa.xml over the same realistic file: Device cpu, the GPU block, the GPU's searches only
psa_run() {
    name=$1
    shift
    mkdir -p "$work/conf-$name"
    printf 'File %s\nRepeat 1\nMaxFrames 0\n' "$work/input.adf" > "$work/conf-$name/ADFReader.conf"
    printf 'File %s\n' "$work/out-$name.adf" > "$work/conf-$name/ADFWriter.conf"
    sed '/^Device /d; /^GPUWork /d; /^Search /d' topologies/conf/PSA.conf > "$work/conf-$name/PSA.conf"
    for kv in "$@"; do echo "$kv" >> "$work/conf-$name/PSA.conf"; done
    build/bin/narwhal run topologies/psa.xml --conf "$work/conf-$name:topologies/conf" > "$out/psa-$name.log" 2>&1 \
        || { echo "psa $name failed"; tail -n 5 "$out/psa-$name.log"; status=1; }
    echo "$name: $(md5sum < "$work/out-$name.adf" | cut -c1-32) $(grep -E 'time in process_block' "$out/psa-$name.log" | sed 's/.*time in/time in/')"
}
if has equal; then
    sed -e "s|^Events .*|Events     30000|" topologies/conf/full_chain/Generator.conf > "$work/Generator.conf"
    mkdir -p "$work/gen-conf"
    mv "$work/Generator.conf" "$work/gen-conf/"
    printf 'File %s\n' "$work/input.adf" > "$work/gen-conf/ADFWriter.conf"
    build/bin/narwhal run topologies/simulate.xml --conf "$work/gen-conf:topologies/conf" > "$out/gen.log" 2>&1 || status=1
    psa_run cpu "Device cpu" "Search full"
    psa_run block "Device gpu" "GPUWork block" "Search full"
    psa_run searches "Device gpu" "GPUWork searches" "Search full"
    psa_run cpu-adaptive "Device cpu" "Search adaptive"
    psa_run block-adaptive "Device gpu" "GPUWork block" "Search adaptive"
    for v in block searches; do
        cmp -s "$work/out-cpu.adf" "$work/out-$v.adf" && echo "full, $v: same bytes as the CPU" \
            || { echo "full, $v: DIFFERS from the CPU"; status=1; }
    done
    cmp -s "$work/out-cpu-adaptive.adf" "$work/out-block-adaptive.adf" && echo "adaptive, block: same bytes as the CPU" \
        || { echo "adaptive, block: DIFFERS from the CPU"; status=1; }
    grep -h -E 'GPU block|GPUWork|fell|failed' "$out"/psa-block*.log | sort | uniq -c | head -n 6
    # the replay chain (psa -> builder -> tracker -> histo -> writer) with the PSA on the CPU and on the GPU block
    for v in cpu gpu; do
        mkdir -p "$work/chain-$v"
        printf 'File %s\n' "$work/input.adf" > "$work/chain-$v/ADFReader.conf"
        printf 'File %s\n' "$work/chain-$v.adf" > "$work/chain-$v/ADFWriter.conf"
        sed "s|^OutputDir .*|OutputDir $work/histo-$v|" topologies/conf/replay_chain/Histo.conf > "$work/chain-$v/Histo.conf"
        sed '/^Device /d' topologies/conf/PSA.conf > "$work/chain-$v/PSA.conf"
        echo "Device $v" >> "$work/chain-$v/PSA.conf"
        build/bin/narwhal run topologies/replay_chain.xml --conf "$work/chain-$v:topologies/conf/replay_chain:topologies/conf" \
            > "$out/chain-$v.log" 2>&1 || { echo "chain $v failed"; tail -n 5 "$out/chain-$v.log"; status=1; }
    done
    cmp -s "$work/chain-cpu.adf" "$work/chain-gpu.adf" && echo "replay chain, PSA cpu and gpu: same bytes" \
        || { echo "replay chain, PSA cpu and gpu: DIFFER"; status=1; }
    diff -r "$work/histo-cpu" "$work/histo-gpu" > /dev/null && echo "replay chain: same histograms" \
        || { echo "replay chain: histograms DIFFER"; status=1; }
fi
if has throughput; then
    sh sample_runs/full_chain/throughput.sh "$label" "$events" > "$out/throughput.log" 2>&1 || status=1
    cat "$out/throughput.log"
    grep -h -E '^\[PSA\] (time in|[0-9]+ data:crystal)' "sample_runs/full_chain/$label"/throughput-[12].log
    cp -r "sample_runs/full_chain/$label" "$out/"
fi
if has threads; then
    # the replay chain pipelined with fewer OpenMP threads for the PSA's decoding and writing
    for n in 4 8; do
        mkdir -p "$work/threads-$n"
        sed '/^Threads /d' topologies/conf/PSA.conf > "$work/threads-$n/PSA.conf"
        echo "Threads $n" >> "$work/threads-$n/PSA.conf"
        build/bin/narwhal run topologies/replay_chain.xml --pipeline \
            --conf "$work/threads-$n:topologies/conf/replay_chain:topologies/conf" > "$out/threads-$n.log" 2>&1 || status=1
        echo "pipelined, PSA Threads $n:"
        grep -E '^(psa|builder|tracker|histo) |blocks ran' "$out/threads-$n.log"
        grep -E 'time in process_block' "$out/threads-$n.log"
    done
fi
echo "total: $(($(date +%s) - start)) s"
exit $status
