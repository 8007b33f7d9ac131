#!/bin/sh
# gpu-run.sh: on the GPU machine, builds the PSA targets, makes the default basis, runs check_psa (GPU equal to CPU), compute-sanitizer, bench-psa and a sample chain; logs go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/psa/gpu-run.sh LABEL [STEPS]
#   STEPS: any of check sanitize bench sample (default: all four)
set -u
label=${1:-gpu}
steps=${2:-check sanitize bench sample}
out=${OUT:-build/gpu-run}
mkdir -p "$out"
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
lscpu | grep -E 'Model name|^CPU\(s\)' | tee -a "$out/gpu.txt"
targets="build/bin/basisgen build/bin/bench-psa build/bin/narwhal build/actors/psa.so \
build/actors/generator.so build/actors/adf_writer.so build/tests/check_psa"
if ! make -j16 $targets > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
fi
grep -E 'warning|error' "$out/build.log" | head -n 20
status=0
mkdir -p build/cache
{ time build/bin/basisgen --quiet -o build/cache/default.basis; } > "$out/basisgen.log" 2>&1 || status=1
tail -n 4 "$out/basisgen.log"
if has check; then
    BUILD=build build/tests/check_psa > "$out/check.log" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|skip|searching on' "$out/check.log" | sort | uniq -c
fi
if has sanitize; then
    small=build/cache/small.basis
    build/bin/basisgen --quiet --grid 5 --field-grid 2 --samples 60 -o $small > /dev/null 2>&1
    for tool in memcheck racecheck; do
        timeout 240 compute-sanitizer --tool $tool build/bin/bench-psa --basis $small --searches 700 \
            --cpu 700 --naive 10 --coarse 15 --radius 16 > "$out/sanitizer-$tool.log" 2>&1 || status=1
        grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' "$out/sanitizer-$tool.log"
    done
fi
if has bench; then
    OMP_NUM_THREADS=$(nproc) build/bin/bench-psa --searches 262144 --cpu 32768 --naive 400 --check \
        > "$out/bench.log" 2>&1 || status=1
    cat "$out/bench.log"
fi
if has sample; then
    sh sample_runs/psa/run.sh "$label" gpu 100000 > "$out/sample.log" 2>&1 || status=1
    tail -n 20 "$out/sample.log"
    tar czf "$out/sample.tgz" "sample_runs/psa/$label"
fi
exit $status
