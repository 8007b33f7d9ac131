#!/bin/sh
# chain-gpu.sh: on the GPU machine, the PSA inside the replay chain: builds, makes the default basis, runs the checks, bench-psa and sample_runs/full_chain/throughput.sh (sequential and pipelined); logs and the results' tarball go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/psa/chain-gpu.sh LABEL [EVENTS] [STEPS]
#   STEPS: any of check bench throughput (default: all three)
set -u
label=${1:-gpu}
events=${2:-400000}
steps=${3:-check bench throughput}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
out=${OUT:-build/chain-gpu}
mkdir -p "$out"
. "$(dirname "$0")/../gpu-common.sh"
start=$(date +%s)
gpu_describe "$out"
targets="build-all"
has check && targets="$targets build-tests"
gpu_build "$out" "$start" $targets
status=0
mkdir -p build/cache
build/bin/basisgen --quiet -o build/cache/default.basis >> "$out/build.log" 2>&1 || status=1
echo "basis: $(($(date +%s) - start)) s"
if has throughput; then
    sh sample_runs/full_chain/throughput.sh "$label" "$events" > "$out/throughput.log" 2>&1 || status=1
    cat "$out/throughput.log"
    grep -h -E '^\[PSA\] (time in|[0-9]+ data:crystal)' "sample_runs/full_chain/$label"/throughput-[12].log
    echo "throughput: $(($(date +%s) - start)) s"
fi
if has check; then
    for t in check_psa check_chain check_pipeline; do
        echo "== $t" >> "$out/checks.log"
        BUILD=build timeout 200 build/tests/$t > "$out/$t.txt" 2>&1 || status=1
        cat "$out/$t.txt" >> "$out/checks.log"
        rm -f "$out/$t.txt"
        echo "$t: $(grep -E 'Checks' "$out/checks.log" | tail -n 1)"
        grep -E ':[EF]:' "$out/checks.log" | head -n 8
    done
    echo "checks: $(($(date +%s) - start)) s"
fi
if has bench; then
    OMP_NUM_THREADS=$(nproc) timeout 120 build/bin/bench-psa --searches 262144 --cpu 8192 --naive 100 --check \
        > "$out/bench.log" 2>&1 || status=1
    grep -E 'GPU|agree|differ' "$out/bench.log" | head -n 12
    # a batch the size of a block's round in the chain
    OMP_NUM_THREADS=$(nproc) timeout 60 build/bin/bench-psa --searches 1024 --cpu 1024 --naive 10 --check \
        >> "$out/bench.log" 2>&1 || status=1
    grep -E 'GPU' "$out/bench.log" | tail -n 6
fi
tar czf "$out/full_chain-$label.tgz" "sample_runs/full_chain/$label"
echo "total: $(($(date +%s) - start)) s"
exit $status
