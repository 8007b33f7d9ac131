#!/bin/sh
# gpu-run.sh: on the GPU machine, builds the tracker's targets, runs its Check suite (GPU equal to CPU), bench-tracker and the study; logs go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/tracker/gpu-run.sh
set -u
out=${OUT:-build/gpu-run-tracker}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
nproc | sed 's/^/CPU threads: /' | tee -a "$out/gpu.txt"
if ! make -j16 build/actors/tracker.so build/tests/check_tracker build/bin/bench-tracker build/bin/ge2adf > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
fi
grep -E 'warning|error' "$out/build.log" | head -n 20
status=0
CK_VERBOSITY=normal BUILD=build build/tests/check_tracker > "$out/check.log" 2>&1 || status=1
grep -E 'Checks|:[EF]:|skip|GPU' "$out/check.log" | tail -n 20
OMP_NUM_THREADS=$(nproc) build/bin/bench-tracker --events1 400000 --events30 40000 --naive1 20000 --naive30 1000 \
    > "$out/bench.log" 2>&1 || status=1
cat "$out/bench.log"
OMP_NUM_THREADS=$(nproc) build/bin/bench-tracker --study "$out/study" --set table --events1 100000 --events30 3000 \
    > "$out/study.log" 2>&1 || status=1
cat "$out/study.log"
exit $status
