#!/bin/sh
# run.sh: on the H200, one call: builds bench-psa, makes the default basis once per machine, runs bench-psa with every GPU pruning mode (bits checked against the unpruned kernel and the CPU), profiles the pruned kernels with ncu and dumps their SASS.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; cd SNAPSHOT && sh sample_runs/psa/h200-kernel5/run.sh [STEPS]
#   STEPS: any of bench ncu sass check (default: bench ncu sass); check: check_psa on the GPU (GPU = CPU bytes)
set -u
steps=${1:-bench ncu sass}
out=${OUT:-build/kernel-run}
mkdir -p "$out"
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
targets="build/bin/basisgen build/bin/bench-psa"
has check && targets="$targets build/bin/narwhal build/actors/psa.so build/actors/generator.so \
build/actors/adf_writer.so build/tests/check_psa"
if ! make -j16 NO_MPI=1 $targets > "$out/build.log" 2>&1; then
    tail -n 30 "$out/build.log"
    exit 1
fi
# the default basis (anisotropic drift since e7039b0) and the isotropic one of the earlier sessions' figures
basis=/tmp/narwhal-default.basis
iso=/tmp/narwhal-isotropic.basis
[ -f $basis ] || build/bin/basisgen --quiet --geometry detector/geometry/agata.geo -o $basis > /dev/null || exit 1
sed 's/^anisotropic_drift .*/anisotropic_drift 0/' detector/geometry/agata.geo > /tmp/agata-iso.geo
[ -f $iso ] || build/bin/basisgen --quiet --geometry /tmp/agata-iso.geo -o $iso > /dev/null || exit 1
echo "built in $(( $(date +%s) - t0 )) s"
if has bench; then
    # VARIANTS: labels for GS_VARIANT (read by a measurement's patched copy; "tree": the tree as it is); BASES; CPU: searches the CPU answers too
    for v in ${VARIANTS:-tree}; do
        for b in ${BASES:-iso default}; do
            f=$basis
            [ $b = iso ] && f=$iso
            GS_VARIANT=$v OMP_NUM_THREADS=$(nproc) build/bin/bench-psa --basis $f --searches 262144 --cpu ${CPU:-32768} \
                --naive 10 --ladder 16 --gpu-prune --check > "$out/bench-$b-$v.txt" 2>&1
            echo "bench-psa ($b basis, $v): exit $? after $(( $(date +%s) - t0 )) s"
            grep -E "^\| (GPU|CPU, 16 threads \| float \| full)" "$out/bench-$b-$v.txt"
            echo "agreement lines: $(grep -c ' ok$' "$out/bench-$b-$v.txt") ok; others:"
            grep -E "same point|FAILED" "$out/bench-$b-$v.txt" | grep -v ' ok$'
        done
    done
fi
# ncu: one chunk (32,768 searches of 262,144) of the fixed-point pruned kernel, float: the rows before it
# (exponent, 3-bit) are 6 runs of 8 chunks each
if has ncu; then
    timeout 100 ncu --clock-control none -k regex:search_tiles_pruned --launch-skip 104 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats --section InstructionStats --section Occupancy build/bin/bench-psa \
        --basis $basis --searches 262144 --cpu 16 --naive 1 --ladder 1 --gpu-prune > "$out/ncu-fixed.txt" 2>&1
    grep -E "search_tiles_pruned<|Duration|Issue Slots Busy|Executed Ipc A|Achieved Occ|Issued Instructions  " \
        "$out/ncu-fixed.txt" | head -n 12
    echo "ncu done after $(( $(date +%s) - t0 )) s"
fi
if has check; then
    BUILD=build timeout ${CHECK_S:-120} build/tests/check_psa > "$out/check_psa.txt" 2>&1
    echo "check_psa: exit $? after $(( $(date +%s) - t0 )) s"
    grep -E "Checks|:[EF]:|skipped|resident" "$out/check_psa.txt" | sort | uniq -c | head -n 12
fi
has sass && cuobjdump --dump-sass build/obj/kernels/gridsearch.o > "$out/sass.txt" 2>&1
exit 0
