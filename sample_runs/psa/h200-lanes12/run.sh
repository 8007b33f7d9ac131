#!/bin/sh
# run.sh: on the H200, one call (session 12): the pruned exact search's survivors scored a few lanes a pair
# (score_list) and the basis staged in two buffers by cp.async (step_pieces), beside the trees before them:
# bench-psa's large batch for each tree (this tree's bits against the unpruned kernel on all 262,144 searches and
# the CPU on 32,768), --rounds 40, ncu of the log kernel with its guess, the SASS's spills; the Check suites first.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/psa/h200-lanes12/run.sh
#   TREES: other trees' sources under build/trees (each built there: TREE_TARGET, default build/bin/bench-psa;
#   default: every one found); BEFORE, WIDE: throughput.sh's (BEFORE needs TREE_TARGET=all);
#   CHECKS: the suites run first (default: check_gridsearch check_psa); STEPS: any of bench rounds ncu ncusrc sass chain
#   (default: bench rounds ncu sass); REPEAT: bench rounds over the trees (default 1); chain: the replay chain
#   (EVENTS generator events, 910000; Neighbours off, 64 MB blocks) with throughput.sh's SET and SEQ_ROWS
#   (default: GPUGuess off / on alternating, three pairs), run once per GPUPrune mode in PRUNES (default: byte log).
# Logs under $OUT (else build/lanes12), packed into $OUT/lanes12.tar.gz.
set -u
steps=${STEPS:-bench rounds ncu sass}
out=${OUT:-build/lanes12}
logs=$out/logs
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_gridsearch check_psa}
gpu_begin "$logs"
gpu_describe "$logs"
trees=${TREES-$(ls build/trees 2>/dev/null)}
for t in $trees; do
    (cd "build/trees/$t" && make -j6 NO_MPI=1 ${TREE_TARGET:-build/bin/bench-psa} > build.log 2>&1) &
done
gpu_build "$logs" "$start" NO_MPI=1 all build-tests
wait
for t in $trees; do
    [ -x "build/trees/$t/build/bin/bench-psa" ] || { echo "tree $t: build failed"; tail -n 20 "build/trees/$t/build.log"; exit 1; }
done
gpu_basis "$logs"
stamp "built: this tree and ${trees:-no other}"
gpu_checks "$logs" 300 $CHECKS
stamp "checks done"
basis=build/cache/default.basis
bench() { # bench DIR NAME CPU: bench-psa of DIR's build into logs/bench-NAME.txt, its GPU float full rows shown
    OMP_NUM_THREADS=$(nproc) "$1/build/bin/bench-psa" --basis $basis --searches 262144 --cpu "$3" --naive 10 \
        --ladder 16 --gpu-prune --check > "$logs/bench-$2.txt" 2>&1 || status=1
    echo "== $2"
    grep -E "^\| GPU( pruned, (log|byte) bound[^|]*)? \| float \| full" "$logs/bench-$2.txt"
    echo "agreement: $(grep -c ' ok$' "$logs/bench-$2.txt") ok; $(grep -E 'FAILED|no row' "$logs/bench-$2.txt" | grep -vc ' ok$') not"
}
rounds() {
    "$1/build/bin/bench-psa" --basis $basis --searches 262144 --rounds 40 > "$logs/rounds-$2.txt" 2>&1 || status=1
    echo "== $2"; grep -E "^\| a block" "$logs/rounds-$2.txt"
}
gpu_has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
for r in $(seq 1 "${REPEAT:-1}"); do
    if gpu_has bench; then
        for t in $trees; do bench "build/trees/$t" "$t-$r" 4096; done
        bench . "now-$r" 32768
        stamp "bench $r done"
    fi
    if gpu_has rounds; then
        for t in $trees; do rounds "build/trees/$t" "$t-$r"; done
        rounds . "now-$r"
        stamp "rounds $r done"
    fi
done
if gpu_has ncu; then
    for d in $trees .; do
        name=$( [ "$d" = . ] && echo now || echo "$d" )
        bin=$( [ "$d" = . ] && echo build/bin/bench-psa || echo "build/trees/$d/build/bin/bench-psa" )
        timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:search_tiles_prunedIfLi3E" \
            --launch-skip 10 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
            --section WarpStateStats --section InstructionStats --section Occupancy --section SchedulerStats \
            --print-details all "$bin" --basis $basis --searches 262144 --cpu 16 --naive 1 --ladder 1 --gpu-prune \
            > "$logs/ncu-$name.txt" 2>&1
        echo "== ncu $name"
        grep -E "Duration|Issue Slots Busy|No Eligible|Eligible Warps|Issued Instructions  |Active Threads Per|Stall|stall" \
            "$logs/ncu-$name.txt" | head -n 30
    done
    stamp "ncu done"
fi
if gpu_has ncusrc; then
    # the log kernel with its guess (bench-psa's "log bound, guess" row: past the 60-odd launches of the row
    # without it), every section and the source page: stall samples and instructions for each SASS line
    timeout 240 ncu --clock-control none --kernel-name-base mangled -k "regex:search_tiles_prunedIfLi3E" \
        --launch-skip ${SKIP:-80} --launch-count 1 --set full -o "$logs/guess" build/bin/bench-psa --basis $basis \
        --searches 262144 --cpu 16 --naive 1 --ladder 1 --gpu-prune > "$logs/ncusrc.txt" 2>&1
    ncu --import "$logs/guess.ncu-rep" --page details --print-details all > "$logs/ncu-guess.txt" 2>&1
    ncu --import "$logs/guess.ncu-rep" --page source --csv --print-source sass > "$logs/source.csv" 2>&1
    gzip -f "$logs/source.csv"
    grep -E "Duration|Issue Slots Busy|No Eligible|Issued Instructions  |Active Threads Per|Stall (Barrier|Long|Short|Wait|Math|Not Sel)" \
        "$logs/ncu-guess.txt" | head -n 16
    stamp "ncu source done"
fi
if gpu_has sass; then
    cuobjdump -sass build/obj/kernels/gridsearch.o > "$logs/gridsearch.sass" 2>&1
    python3 - "$logs/gridsearch.sass" <<'PY' | tee "$logs/spills.txt"
import sys, re
fn = None; lines = {}
for l in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', l)
    if m: fn = m.group(1); lines[fn] = []; continue
    if fn: lines[fn].append(l.rstrip())
for fn, ls in lines.items():
    if 'search_tiles_pruned' not in fn: continue
    spills = [i for i, l in enumerate(ls) if re.search(r'\b(LDL|STL)\b', l)]
    bra = [i for i, l in enumerate(ls) if re.search(r'\bBRA\b', l)]
    print(fn, 'instructions', len(ls), 'LDL/STL at', spills[:20])
    for i in spills[:12]:
        print('   ', ls[i].strip()[:110])
PY
fi
if gpu_has chain; then
    gpu_replay_in_memory
    for mode in ${PRUNES:-byte log}; do
        label=lanes12-$mode
        SET="PSA.conf:Neighbours:off PSA.conf:GPUPrune:$mode" READER_BUFFER=64000000 KEEP_INPUT=1 CONF_ROWS= WIDE=${WIDE:-0} \
            SEQ_ROWS="${SEQ_ROWS-PSA.conf:GPUGuess:off PSA.conf:GPUGuess:on PSA.conf:GPUGuess:off PSA.conf:GPUGuess:on PSA.conf:GPUGuess:off PSA.conf:GPUGuess:on}" \
            sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
        mkdir -p "$logs/$label"
        gpu_show_chain "sample_runs/full_chain/$label" "$logs/$label" 'GPUPrune|time in process_block|^blocks ran'
        stamp "chain $mode done"
    done
fi
tar -czf "$out/lanes12.tar.gz" -C "$out" logs
exit $status
