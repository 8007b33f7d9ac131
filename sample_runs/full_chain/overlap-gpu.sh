#!/bin/sh
# overlap-gpu.sh: on the GPU machine, the PSA's Parts (issue 20: a block cut into parts worked on at once within its call): build, default basis, check_psa, then the replay chain sequential and pipelined with Parts 1, 2, 3 and 4; prints the table, each row's PSA lines and per-actor table.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/full_chain/overlap-gpu.sh [LABEL] [EVENTS] [STEPS]
#   LABEL: h200-issue20/8-parts; EVENTS: generator events of the replay's input, 910000 (as 7-prune: 1,957,087
#   crystal-events); STEPS: any of check throughput (default: both; two calls fit the device's 10 minutes better).
set -u
label=${1:-h200-issue20/8-parts}
events=${2:-910000}
steps=${3:-check throughput}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
out=${OUT:-build/overlap-gpu}
mkdir -p "$out" build/cache
. "$(dirname "$0")/../gpu-common.sh"
gpu_describe "$out"
start=$(date +%s)
gpu_build "$out" "$start" all build/tests/check_psa
status=0
[ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis > "$out/basisgen.log" 2>&1 ||
    status=1
if has check; then
    BUILD=build build/tests/check_psa > "$out/check_psa.log" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|SKIP|passed' "$out/check_psa.log"
fi
if has throughput; then
    PSA_PARTS="1 2 3 4" sh sample_runs/full_chain/throughput.sh "$label" "$events" > "$out/throughput.log" 2>&1 ||
        status=1
    cat "$out/throughput.log"
    # rows 1-2: the defaults (Parts 3 on a GPU); then sequential and pipelined for Parts 1, 2, 3, 4
    for log in $(ls "sample_runs/full_chain/$label"/throughput-[0-9]*.log | sort -V); do
        echo "== $log"
        grep -E '^\[PSA\] (Parts|GPUWork|time in process_block)' "$log"
        sed -n '/^actor  *library/,/^busiest actor/p' "$log"
    done
    cp -r "sample_runs/full_chain/$label" "$out/"
fi
echo "total: $(($(date +%s) - start)) s"
exit $status
