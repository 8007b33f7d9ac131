#!/bin/sh
# run.sh: on the H200, one call (session 17): the reader's copy out of the bytes read ahead, this tree (1 MiB a
# thread at a time, memcpy) alternating with a copy in 8 MiB pieces (build/trees/copy8) and then with one by
# streaming stores (build/trees/nt), in the replay chain's sequential rows.
#   device command (from a tree snapshot, the copies' sources carried under build/trees):
#   . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-copy17/run.sh
# Logs under $OUT (else build/copy17), packed into $OUT/copy17.tar.gz.
set -u
status=0
out=${OUT:-build/copy17}
logs=$out/logs
mkdir -p "$logs"
(cd build/trees/nt && make -j6 NO_MPI=1 all > build.log 2>&1) &
for v in copy8 nt; do
    OUT=$logs/$v BEFORE=build/trees/$v CHECKS= ALTERNATE=${ALTERNATE:-2} WIDE=0 SEQ_ROWS= \
        sh sample_runs/full_chain/h200-seq13/run.sh > "$logs/$v.out" 2>&1 || status=1
    wait
    grep -E '^\[' "$logs/$v.out" | tail -1
    grep -E '^\| (seq|pip)' "$logs/$v/logs/seq13/throughput.txt"
    grep -hoE '[0-9.]* s copying into the blocks' "$logs"/$v/logs/seq13/throughput-*.log | tr '\n' ' '
    echo
done
tar -czf "$out/copy17.tar.gz" -C "$out" logs && rm -rf "$logs"
exit $status
