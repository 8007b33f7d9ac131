#!/bin/sh
# neighbours-gpu.sh: on the GPU machine, Neighbours iterate with the whole block on the GPU (issue 15 item 2): check_psa (GPU against CPU), psa-pairs' events through the GPU block and the CPU (same bytes, accuracy by class), then the replay chain with Neighbours iterate and off (the PSA's process_block time, the goal: iterate at most ~1.3x off).
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/psa/neighbours-gpu.sh [LABEL] [EVENTS] [STEPS]
#   LABEL: h200-neighbours (results under sample_runs/full_chain/LABEL-iterate, -off and $OUT)
#   EVENTS: the replay chain's generator events (100000, as sample_runs/full_chain/h200-issue20/6-neighbours)
#   STEPS: any of check pairs chain (default: all three)
set -u
label=${1:-h200-neighbours}
events=${2:-100000}
steps=${3:-check pairs chain}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
out=${OUT:-build/neighbours-gpu}
work=build/neighbours-gpu-work
mkdir -p "$out" "$work"
. "$(dirname "$0")/../gpu-common.sh"
gpu_begin "$out"
gpu_describe "$out"
gpu_build "$out" "$start" build-all build-tests
gpu_basis "$out"
echo "build and basis: $(($(date +%s) - start)) s"

if has check; then
    BUILD=build timeout 600 build/tests/check_psa > "$out/check_psa.txt" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|SKIP' "$out/check_psa.txt" | head -n 12
fi

if has pairs; then
    # psa-pairs' 4,000 crystals (singles, ring, sector, diagonal neighbours, far) on the GPU block and on the 16 cores
    for dev in gpu cpu; do
        threads=0
        sh sample_runs/psa/pairs.sh "$label-pairs-$dev" 4000 "$threads" "$dev" > "$out/pairs-$dev.txt" 2>&1 || status=1
    done
    for mode in off iterate; do
        a=build/psa-sample/$label-pairs-gpu/$mode/output.adf b=build/psa-sample/$label-pairs-cpu/$mode/output.adf
        cmp -s "$a" "$b" && echo "psa-pairs, Neighbours $mode: GPU block and CPU give the same bytes" \
            || { echo "psa-pairs, Neighbours $mode: GPU block and CPU DIFFER"; status=1; }
    done
    grep -A 8 '== Neighbours iterate' "$out/pairs-gpu.txt"
    grep -h -E 'on the device|fell|failed' "sample_runs/psa/$label-pairs-gpu"/run-*.log | head -n 4
    cp -r "sample_runs/psa/$label-pairs-gpu" "sample_runs/psa/$label-pairs-cpu" "$out/"
fi

if has chain; then
    # the replay chain (topologies/replay_chain.xml, the default PSA.conf: Neighbours iterate), then with Neighbours off
    mkdir -p "$work/conf-off"
    sed 's/^Neighbours .*/Neighbours  off/' topologies/conf/PSA.conf > "$work/conf-off/PSA.conf"
    for mode in iterate off; do
        extra=
        [ "$mode" = off ] && extra=$work/conf-off
        EXTRA_CONF=$extra PSAS="${PSAS:-3}" TRACKERS="${TRACKERS:-2}" \
            sh sample_runs/full_chain/throughput.sh "$label-$mode" "$events" > "$out/chain-$mode.txt" 2>&1 || status=1
        echo "== replay chain, Neighbours $mode"
        grep -E '^\||^#' "$out/chain-$mode.txt"
        for row in 1 2; do
            grep -h -E '^\[PSA\] (time in|[0-9]+ data:crystal)' "sample_runs/full_chain/$label-$mode/throughput-$row.log"
        done
        cp -r "sample_runs/full_chain/$label-$mode" "$out/"
    done
fi
echo "total: $(($(date +%s) - start)) s"
exit $status
