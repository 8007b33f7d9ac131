#!/bin/sh
# gpu-run.sh: on the GPU machine, builds the chain, makes the default basis, runs check_chain, records the full chain (run.sh) and the replay throughput (throughput.sh); logs and a tarball of the results go to $OUT.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/full_chain/gpu-run.sh LABEL [EVENTS] [STEPS]
#   STEPS: any of check run throughput variants (default: check run throughput; variants: throughput.sh's VARIANTS rows)
set -u
label=${1:-gpu}
events=${2:-300000}
steps=${3:-check run throughput}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
out=${OUT:-build/gpu-run-chain}
mkdir -p "$out"
. "$(dirname "$0")/../gpu-common.sh"
gpu_describe "$out"
actors="build/actors/generator.so build/actors/psa.so build/actors/builder.so build/actors/tracker.so \
build/actors/histo.so build/actors/adf_reader.so build/actors/adf_writer.so"
start=$(date +%s)
gpu_build "$out" "$start" build/bin/narwhal build/bin/basisgen $actors build/tests/check_chain
status=0
mkdir -p build/cache
{ time build/bin/basisgen --quiet -o build/cache/default.basis; } > "$out/basisgen.log" 2>&1 || status=1
tail -n 3 "$out/basisgen.log"
if has check; then
    BUILD=build build/tests/check_chain > "$out/check.log" 2>&1 || status=1
    grep -E 'Checks|:[EF]:|skip' "$out/check.log"
fi
if has run; then
    sh sample_runs/full_chain/run.sh "$label" --pipeline > "$out/run.log" 2>&1 || status=1
    grep -E 'chain and summary|balance|peak/total|rms ' "$out/run.log"
    grep -E 'searching on|tracking on|counting on|wall time' "sample_runs/full_chain/$label/run.log"
fi
if has throughput || has variants; then
    VARIANTS=$(has variants && echo 1 || echo 0) sh sample_runs/full_chain/throughput.sh "$label" "$events" \
        > "$out/throughput.log" 2>&1 || status=1
    cat "$out/throughput.log"
fi
tar czf "$out/full_chain-$label.tgz" "sample_runs/full_chain/$label"
echo "total: $(($(date +%s) - start)) s"
exit $status
