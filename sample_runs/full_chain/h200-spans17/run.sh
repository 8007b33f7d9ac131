#!/bin/sh
# run.sh: on the H200, one call (session 17): bench-psa's large batch for this tree (kFillChunk 4) and copies with
# kFillChunk 8 and 16 (build/trees/fill8, fill16), then the replay chain sequentially, this tree's rows alternating
# with a copy whose PSA lists a block's frames in one walk (build/trees/nospans: adf_spans_cut with one span), and
# sequential rows with OMP_WAIT_POLICY passive and active, alternating (SEQ_ROWS).
#   device command (from a tree snapshot, the copies' sources carried under build/trees):
#   . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-spans17/run.sh
# Logs under $OUT (else build/spans17), packed into $OUT/spans17.tar.gz: bench-*.txt, chain/ (h200-seq13/run.sh's,
# packed in chain/seq13.tar.gz).
set -u
. "$(dirname "$0")/../../gpu-common.sh"
gpu_session spans17
for v in fill8 fill16; do (cd "build/trees/$v" && make -j4 NO_MPI=1 all > build.log 2>&1) & done
BEFORE=build/trees/nospans gpu_build_beside "$logs" "$start"
wait
stamp "built: this tree, nospans, fill8, fill16"
for run in now-1 fill8-1 fill16-1 now-2; do
    case $run in now-*) bin=build/bin/bench-psa ;; *) bin=build/trees/${run%-*}/build/bin/bench-psa ;; esac
    gpu_psa_against "$logs" "$run" "$bin"
    stamp "bench $run done"
done
P=env:OMP_WAIT_POLICY
OUT=$logs/chain BEFORE=build/trees/nospans CHECKS=${CHECKS-} ALTERNATE=${ALTERNATE:-2} WIDE=0 \
    SEQ_ROWS="${SEQ_ROWS-$P:passive $P:active $P:passive $P:active}" \
    sh sample_runs/full_chain/h200-seq13/run.sh > "$logs/chain.out" 2>&1 || status=1
grep -E '^\[' "$logs/chain.out"
grep -E '^\| (seq|pip)' "$logs/chain/logs/seq13/throughput.txt"
grep -hE 'listing|keeping' "$logs"/chain/logs/seq13/throughput-*.log | grep -oE '(listing|sending to the device|telling the host where they came from|keeping the frames to emit) ?[0-9.]* s|[0-9.]* s (keeping|telling)' | paste - - - - | head -12
rm -rf "$logs/chain/logs"
tar -czf "$out/spans17.tar.gz" -C "$out" logs && rm -rf "$logs"
exit $status
