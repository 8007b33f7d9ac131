#!/bin/sh
# run.sh: on the H200, one call (session 9): the pruned full search's first step bounded against its own guess
# (GPUGuess on: call 1 a guess kernel before the tiles, guess_answers; call 2 on: guess_step in the tiles) beside the
# first step computed exactly (GPUGuess off): bench-psa's large batch (bits against the unpruned kernel and the CPU),
# the chain's batch sizes (--rounds), the Check suites of the search on the GPU, and the replay chain (Neighbours off,
# 64 MB blocks) sequential and pipelined with GPUGuess on, off and on again.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-guess9/run.sh [STEPS]
#   STEPS: any of bench rounds chain ncu (default: bench rounds chain); CHECKS: the suites run first
#   (default: check_gridsearch check_psa); EVENTS: generator events of the chain's input (910000); BEFORE=DIR: another
#   tree's sources, built beside this one, its sequential and pipelined chain rows added (throughput.sh's BEFORE)
# Logs under $OUT (else build/guess9), packed into $OUT/guess9.tar.gz.
set -u
steps=${1:-bench rounds chain}
# call 1 also ran CONF_ROWS with ADFReader.conf:Threads:16 and PSA.conf:Threads:16 (both slower sequentially)
out=${OUT:-build/guess9}
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_gridsearch check_psa}
gpu_prepare "$out/logs" 300
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
basis=build/cache/default.basis
if has bench; then
    OMP_NUM_THREADS=$(nproc) build/bin/bench-psa --basis $basis --searches 262144 --cpu 32768 --naive 10 --ladder 16 \
        --gpu-prune --check > "$out/logs/bench.txt" 2>&1 || status=1
    grep -E "^\| (GPU|CPU, [0-9]+ threads \| float \| full)" "$out/logs/bench.txt"
    echo "agreement lines: $(grep -c ' ok$' "$out/logs/bench.txt") ok; others:"
    grep -E "same point|FAILED|no row" "$out/logs/bench.txt" | grep -v ' ok$'
    stamp "bench done"
fi
if has rounds; then
    build/bin/bench-psa --basis $basis --searches 262144 --rounds 40 > "$out/logs/rounds.txt" 2>&1 || status=1
    grep -E "rounds,|^\| a block|same|FAILED" "$out/logs/rounds.txt"
    stamp "rounds done"
fi
if has ncu; then
    for m in ${MODES:-4}; do
        timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:search_tiles_prunedIfLi${m}E" \
            --launch-skip 10 --launch-count 1 \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
            --section InstructionStats --section Occupancy --section SchedulerStats build/bin/bench-psa \
            --basis $basis --searches 262144 --cpu 16 --naive 1 --ladder 1 --gpu-prune > "$out/logs/ncu-$m.txt" 2>&1
        grep -E "search_tiles_pruned|Duration|Issue Slots Busy|Issued Instructions  |Eligible Warps" \
            "$out/logs/ncu-$m.txt" | head -n 16
        stamp "ncu $m done"
    done
fi
if has chain; then
    gpu_replay_in_memory
    label=guess9-chain
    SET="PSA.conf:Neighbours:off" READER_BUFFER=64000000 KEEP_INPUT=1 \
        CONF_ROWS="${CONF_ROWS-PSA.conf:GPUGuess:off PSA.conf:GPUGuess:on}" WIDE=${WIDE-1} \
        sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
    mkdir -p "$out/logs/$label"
    gpu_show_chain "sample_runs/full_chain/$label" "$out/logs/$label" \
        'time in process_block|GPUGuess|^blocks ran|^(reader|psa[0-9]*|builder|tracker[0-9]*|histo|writer) '
    stamp "chain done"
fi
tar -czf "$out/guess9.tar.gz" -C "$out" logs
exit $status
