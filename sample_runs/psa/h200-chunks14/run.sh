#!/bin/sh
# run.sh: on the H200, one call (session 14): gs_gpu_search's host-to-host share. bench-psa's large batch for this
# tree and the tree before (build/trees/before, its sources), with where each GPU row's call goes (before the first
# kernel, the kernels, the rest); then this tree again under each setting in VARIANTS (NARWHAL_GS_* environment
# variables that gridsearch.cu read during the experiment, commits 27005cb to 310a7d5, and no longer does: FIRST, the
# first chunk's searches; STAGES, chunks in flight; CHUNKS, the batch over the largest chunk; TAIL=1, the last chunks
# halving; SERIAL=1, the host's parts on one thread; SPLIT=1, columns split against the whole batch; GROWTH, the
# ramp's growth in percent), each with --check; the Check suites first.
#   CHAIN_ROWS: throughput.sh's SEQ_ROWS for a replay chain after (none: no chain).
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-chunks14/run.sh
# Logs under $OUT (else build/chunks14), packed into $OUT/chunks14.tar.gz.
set -u
out=${OUT:-build/chunks14}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
gpu_begin "$logs"
gpu_describe "$logs"
if [ -d build/trees/before ]; then
    (cd build/trees/before && make -j6 NO_MPI=1 build/bin/bench-psa > build.log 2>&1) &
fi
gpu_build "$logs" "$start" NO_MPI=1 all build-tests
wait
gpu_basis "$logs"
stamp "built"
gpu_checks "$logs" 300 ${CHECKS-check_gridsearch check_psa}
stamp "checks done"
basis=build/cache/default.basis
rows='^\| GPU( pruned, (geometric|log|byte) bound[^|]*)? \| float \| full'
bench() { # bench BIN NAME CPU [VAR=VALUE...]: bench-psa into logs/bench-NAME.txt, its float full GPU rows shown
    bin=$1 name=$2 cpu=$3
    shift 3
    env "$@" OMP_NUM_THREADS=$(nproc) "$bin" --basis $basis --searches 262144 --cpu "$cpu" --naive 10 --ladder 16 \
        --gpu-prune --check > "$logs/bench-$name.txt" 2>&1 || status=1
    echo "== $name $*"
    grep -E "$rows" "$logs/bench-$name.txt"
    echo "agreement: $(grep -c ' ok$' "$logs/bench-$name.txt") ok; $(grep -E 'same point|FAILED|no row' "$logs/bench-$name.txt" | grep -vc ' ok$') not"
}
for r in $(seq 1 "${REPEAT:-1}"); do
    [ -x build/trees/before/build/bin/bench-psa ] && bench build/trees/before/build/bin/bench-psa "before-$r" 4096
    bench build/bin/bench-psa "now-$r" 32768
    grep -E '^\| GPU[^|]*\| float \| full \| [0-9]+\.[0-9]{3} \|' "$logs/bench-now-$r.txt"
    stamp "bench $r done"
done
i=0
for v in ${VARIANTS:-}; do
    i=$((i + 1))
    set -- $(echo "$v" | tr ',' ' ' | sed 's/\([A-Z]*=\)/NARWHAL_GS_\1/g')
    bench build/bin/bench-psa "v$i" 4096 "$@"
    grep -E '^\| GPU[^|]*\| float \| full \| [0-9]+\.[0-9]{3} \|' "$logs/bench-v$i.txt"
    stamp "variant $v done"
done
if [ -n "${CHAIN_ROWS:-}" ]; then # the replay chain sequentially, a row per setting (910,000 decays, 64 MB blocks)
    gpu_replay_in_memory
    SET="PSA.conf:Neighbours:off" READER_BUFFER=64000000 KEEP_INPUT=1 CONF_ROWS= WIDE=0 SEQ_ROWS="$CHAIN_ROWS" \
        sh sample_runs/full_chain/throughput.sh chunks14 "${EVENTS:-910000}" > "$logs/throughput.out" 2>&1 || status=1
    mkdir -p "$logs/chunks14"
    gpu_show_chain sample_runs/full_chain/chunks14 "$logs/chunks14" 'GPUPrune|time in process_block|^blocks ran'
    stamp "chain done"
fi
tar -czf "$out/chunks14.tar.gz" -C "$out" logs
exit $status
