#!/bin/sh
# run.sh: on an H200, issue 20's closing figures for one tree in one session (session 18): the whole `make check`
# with the GPU (STEP=check), bench-psa's large batch (262,144 searches, every pruned row's bits against the
# unpruned kernel, 32,768 against the CPU, the GPU board's watts; STEP=bench), then the replay chain of 910,000
# decays (1,957,087 crystal-events, read from memory): sequential rows of the defaults and replay_chain_wide.xml
# pipelined (STEP=chain, WIDE rows, SEQ extra sequential rows).  All three ran in one call in 296 s on a fresh machine.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; STEP="check bench" sh sample_runs/full_chain/h200-close18/run.sh
# Logs under $OUT (else build/close18), packed into $OUT/close18-STEPS.tar.gz.
set -u
. "$(dirname "$0")/../../gpu-common.sh"
gpu_session close18
steps=${STEP:-check bench}
BEFORE= gpu_build_beside "$logs" "$start"
stamp "built, basis made"
if gpu_has check; then
    timeout 420 make --no-print-directory NO_MPI=1 check > "$logs/check.txt" 2>&1 || status=1
    grep -E ':[EF]:|failing|passed, ' "$logs/check.txt" | tail -n 12
    grep -E '^\[[a-z_]*\] SKIP' "$logs/check.txt" | head -n 20
    stamp "make check done"
fi
if gpu_has bench; then gpu_psa_bench "$logs"; grep -E 'power|limits|ratio: GPU' "$logs/bench.txt" | head -n 30; fi
if gpu_has chain; then
    P=PSA.conf:GPUPrune:byte
    OUT=$logs/chain BEFORE= CHECKS= ALTERNATE=0 WIDE=${WIDE:-2} SEQ_ROWS="${SEQ-$P $P $P}" \
        sh sample_runs/full_chain/h200-seq13/run.sh > "$logs/chain.out" 2>&1 || status=1
    grep -E '^\[' "$logs/chain.out"
    grep -E '^\| (seq|pip)' "$logs/chain/logs/seq13/throughput.txt"
    grep -hE 'time in process_block' "$logs"/chain/logs/seq13/throughput-*.log | cut -c1-400
    rm -rf "$logs/chain/logs"
fi
tar -czf "$out/close18-$(echo $steps | tr ' ' '-').tar.gz" -C "$out" logs && rm -rf "$logs"
exit $status
