#!/bin/sh
# gpu-run.sh: on the GPU machine, builds histo's targets, runs its tests (GPU equal to CPU) and bench-histo; logs go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh actors/histo/gpu-run.sh [--quick]
set -u
out=${OUT:-build/gpu-run}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/gpu.txt"
targets="build/bin/bench-histo"
if [ -f tests/check_histo.c ]; then
    targets="$targets build/actors/histo.so build/actors/histo_sink.so build/tests/check_histo"
fi
if ! make -j16 $targets > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 1
fi
grep -E 'warning|error' "$out/build.log" | head -n 20
cuobjdump -sass build/obj/kernels/histogram.o > "$out/histogram.sass" 2>&1
status=0
if [ -x build/tests/check_histo ]; then
    CK_VERBOSITY=normal BUILD=build build/tests/check_histo > "$out/check.log" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|skip|GPU' "$out/check.log" | tail -n 20
fi
OMP_NUM_THREADS=$(nproc) build/bin/bench-histo "$@" 2>&1 | tee "$out/bench.log" || status=1
exit $status
