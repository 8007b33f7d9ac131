#!/bin/sh
# ncu.sh: on the H200 (session 15, call 6): ncu of one chunk of search_tiles_pruned<float, GS_PRUNE_GEO> (its 11th
# launch in bench-psa's large batch) for this tree and the tree before (build/trees/before), the key lines shown.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-quant15/ncu.sh
# Logs under $OUT (else build/ncu15).
set -u
out=${OUT:-build/ncu15}
. "$(dirname "$0")/../../gpu-common.sh"
gpu_begin "$out"
BEFORE=build/trees/before
(cd "$BEFORE" && make -j8 NO_MPI=1 build/bin/bench-psa > build.log 2>&1) &
gpu_build "$out" "$start" NO_MPI=1 build/bin/bench-psa build/bin/basisgen
wait
gpu_basis "$out"
stamp "built"
for t in now before; do
    bin=build/bin/bench-psa
    [ "$t" = before ] && bin=$BEFORE/build/bin/bench-psa
    mkdir -p "$out/$t"
    gpu_psa_ncu_bin=$bin gpu_psa_ncu "$out/$t" 5
done
exit $status
