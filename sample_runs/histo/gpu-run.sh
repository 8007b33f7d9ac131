#!/bin/sh
# gpu-run.sh: on the GPU machine, builds histo's targets, runs its tests (GPU equal to CPU, under compute-sanitizer too), bench-histo and a sample chain; logs go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/histo/gpu-run.sh LABEL
set -u
label=${1:-gpu}
out=${OUT:-build/gpu-run}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
targets="build/bin/bench-histo build/bin/narwhal build/tests/mkadf build/actors/adf_reader.so \
build/actors/adf_writer.so build/actors/histo.so build/actors/histo_sink.so build/tests/check_histo"
if ! make -j16 $targets > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
fi
grep -E 'warning|error' "$out/build.log" | head -n 20
status=0
BUILD=build build/tests/check_histo > "$out/check.log" 2>&1 || status=1
grep -E 'Checks|:[EF]:|skip|GPU' "$out/check.log"
for tool in memcheck racecheck; do
    CK_RUN_CASE=gpu CK_FORK=no BUILD=build timeout 240 compute-sanitizer --tool $tool \
        build/tests/check_histo > "$out/sanitizer-$tool.log" 2>&1 || status=1
    grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Checks' "$out/sanitizer-$tool.log"
done
OMP_NUM_THREADS=$(nproc) build/bin/bench-histo 2>&1 | tee "$out/bench.log" || status=1
sh sample_runs/histo/run.sh "$label" gpu 2000 > "$out/sample.log" 2>&1 || status=1
grep -E 'counting|histo  |wall time|output equals' "$out/sample.log"
tar czf "$out/sample.tgz" "sample_runs/histo/$label"
exit $status
