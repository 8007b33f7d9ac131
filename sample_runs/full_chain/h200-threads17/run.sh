#!/bin/sh
# run.sh: on the H200, one call (session 17): the Check suites CHECKS names, then the replay chain sequentially with
# the host threads of the reader (R), the PSA (P) and the tracker and histogrammer (T) at 16 instead of their
# defaults (half the CPUs, at most 8), each such row followed by a default one (D), and a wide pipelined row.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-threads17/run.sh
# Logs under $OUT (else build/threads17), packed into $OUT/threads17.tar.gz.
set -u
status=0
out=${OUT:-build/threads17}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
R=ADFReader.conf:Threads:16
P=PSA.conf:Threads:16
T=Tracker.conf:Threads:16+Histo.conf:Threads:16
D=PSA.conf:GPUPrune:byte
OUT=$logs BEFORE= CHECKS=${CHECKS-check_psa check_reliability} ALTERNATE=0 WIDE=1 \
    SEQ_ROWS="${SEQ_ROWS-$R $D $P $D $T $D $R+$P+$T $D $R $D $P $D $T $D $R+$P+$T $D}" \
    sh sample_runs/full_chain/h200-seq13/run.sh > "$logs.out" 2>&1 || status=1
grep -E '^\[|Checks|passed' "$logs.out"
grep -E '^\| (seq|pip)' "$logs/logs/seq13/throughput.txt"
mv "$logs.out" "$logs/logs/run.out"
tar -czf "$out/threads17.tar.gz" -C "$logs" logs && rm -rf "$logs"
exit $status
