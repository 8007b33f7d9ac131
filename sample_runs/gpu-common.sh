# gpu-common.sh: shell functions that the GPU machine's scripts source: the script's clock and status, the machine's description, the build (beside another tree's), the basis and the Check suites.

# gpu_begin DIR: a script's clock (start), its exit status (status, 0 until a step fails) and DIR made; stamp TEXT
# then prints TEXT after the seconds since the start.
gpu_begin() {
    start=$(date +%s)
    status=0
    mkdir -p "$1"
}
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }

# gpu_session NAME: a session script's opening: out ($OUT, else build/NAME) and logs ($out/logs) set, gpu_begin
# there, the machine described (gpu_describe).
gpu_session() {
    out=${OUT:-build/$1}
    logs=$out/logs
    gpu_begin "$logs"
    gpu_describe "$logs"
}

# gpu_describe OUT: the GPU and the CPU, shown and kept in OUT/gpu.txt.
gpu_describe() {
    { nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; lscpu | grep -E 'Model name|^CPU\(s\)'; } \
        | tee "$1/gpu.txt"
}

# gpu_build OUT START TARGET...: make -j16 the targets, the log in OUT/build.log; on failure its last lines and exit 1
# (the whole script: nothing after it can run without the build), else its first warnings and the seconds since START.
gpu_build() {
    gpu_build_out=$1
    gpu_build_start=$2
    shift 2
    if ! make -j16 "$@" > "$gpu_build_out/build.log" 2>&1; then
        tail -n 40 "$gpu_build_out/build.log"
        exit 1
    fi
    grep -E 'warning|error' "$gpu_build_out/build.log" | head -n 20
    echo "build: $(($(date +%s) - gpu_build_start)) s"
}

# gpu_build_beside OUT START: this tree's `all build-tests` (gpu_build, NO_MPI=1) and, when BEFORE names another
# tree's sources, its `all` in BEFORE/build at the same time (its log in BEFORE/build.log); then the default basis.
gpu_build_beside() {
    if [ -n "${BEFORE:-}" ]; then
        (cd "$BEFORE" && make -j8 NO_MPI=1 all > build.log 2>&1) &
        gpu_build_before=$!
    fi
    gpu_build "$1" "$2" NO_MPI=1 all build-tests
    if [ -n "${BEFORE:-}" ]; then
        wait "$gpu_build_before" || { tail -n 20 "$BEFORE/build.log"; exit 1; }
    fi
    gpu_basis "$1"
}

# gpu_basis OUT: the default basis in build/cache (once), basisgen's output in OUT/build.log.
gpu_basis() {
    mkdir -p build/cache
    [ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis >> "$1/build.log" 2>&1
}

# gpu_checks OUT SECONDS SUITE...: each Check suite of build/tests in turn (at most SECONDS each), its log in
# OUT/SUITE.txt and its key lines shown; status=1 when one fails.
gpu_checks() {
    gpu_checks_out=$1
    gpu_checks_s=$2
    shift 2
    for suite in "$@"; do
        BUILD=build timeout "$gpu_checks_s" tests/run-checks.sh "build/tests/$suite" > "$gpu_checks_out/$suite.txt" 2>&1 ||
            status=1
        grep -E 'Checks|:[EF]:|passed' "$gpu_checks_out/$suite.txt" | head -n 8
    done
}

# gpu_open OUT: a session script's opening: gpu_begin, the machine described, this tree built (and BEFORE's beside
# it) with the basis, stamped.
gpu_open() {
    gpu_begin "$1"
    gpu_describe "$1"
    gpu_build_beside "$1" "$start"
    stamp "built, basis made"
}

# gpu_prepare OUT SECONDS: gpu_open, then the Check suites CHECKS names (at most SECONDS each), stamped.
gpu_prepare() {
    gpu_open "$1"
    gpu_checks "$1" "$2" ${CHECKS:-}
    stamp "checks done"
}

# gpu_show_chain KEEP OUT LINES: throughput.sh's results in KEEP copied into OUT, its table and ratio lines shown,
# then each run's log's lines that match the extended regex LINES (at most 900 characters each).
gpu_show_chain() {
    cp "$1"/* "$2/"
    grep -E '^(\||ratio)' "$1/throughput.txt"
    for f in "$1"/throughput-[0-9]*.log; do
        echo "== $(basename "$f")"
        grep -E "$3" "$f" | cut -c1-900
    done
}

# gpu_replay_in_memory: the replay chain's files (build/replay_chain) in /dev/shm, so that its input is read from memory.
gpu_replay_in_memory() {
    mkdir -p /dev/shm/rc
    ln -sfn /dev/shm/rc build/replay_chain
}

# gpu_psa_bench OUT: bench-psa's large batch (262,144 searches, every pruned row's bits against the unpruned kernel and
# 32,768 against the CPU) in OUT/bench.txt, its GPU rows and agreement shown; status=1 when it fails.
gpu_psa_bench() {
    OMP_NUM_THREADS=$(nproc) build/bin/bench-psa --basis build/cache/default.basis --searches 262144 --cpu 32768 \
        --naive 10 --ladder 16 --gpu-prune --check > "$1/bench.txt" 2>&1 || status=1
    grep -E "^\| (GPU|CPU, [0-9]+ threads \| float \| full)" "$1/bench.txt"
    echo "agreement lines: $(grep -c ' ok$' "$1/bench.txt") ok; others:"
    grep -E "same point|FAILED|no row" "$1/bench.txt" | grep -v ' ok$'
    stamp "bench done"
}

# gpu_psa_against OUT NAME BIN: BIN's (a bench-psa) large batch (262,144 searches, --check) in OUT/bench-NAME.txt, its
# full-search GPU rows and its agreement lines counted shown; status=1 when it fails.
gpu_psa_against() {
    OMP_NUM_THREADS=$(nproc) "$3" --basis build/cache/default.basis --searches 262144 --cpu 4096 --naive 10 --ladder 16 \
        --gpu-prune --check > "$1/bench-$2.txt" 2>&1 || status=1
    echo "== $2"
    grep -E '^\| GPU[^|]*\| (float|int16) \| full \|' "$1/bench-$2.txt"
    echo "agreement: $(grep -c ' ok$' "$1/bench-$2.txt") ok; $(grep -E 'same point|FAILED|no row' "$1/bench-$2.txt" | grep -vc ' ok$') not"
}

# gpu_psa_alternate OUT: gpu_psa_against for BEFORE's bench-psa (when BEFORE is set) and this tree's, alternating,
# REPEAT times (default 2), stamped.
gpu_psa_alternate() {
    for r in $(seq 1 "${REPEAT:-2}"); do
        [ -n "${BEFORE:-}" ] && gpu_psa_against "$1" "before-$r" "$BEFORE/build/bin/bench-psa"
        gpu_psa_against "$1" "now-$r" build/bin/bench-psa
        stamp "bench $r done"
    done
}

# gpu_psa_session NAME: a whole bench call: logs under $OUT (else build/NAME), BEFORE (default build/trees/before)
# built beside this tree (gpu_open), the Check suites CHECKS names (default check_gridsearch check_psa), the two
# trees' large batches alternating (gpu_psa_alternate), ncu of this tree's float kernels for the modes NCU names
# (none by default), the logs packed into $OUT/NAME.tar.gz; exits with the status.
gpu_psa_session() {
    out=${OUT:-build/$1}
    logs=$out/logs
    BEFORE=${BEFORE-build/trees/before}
    gpu_open "$logs"
    gpu_checks "$logs" 300 ${CHECKS-check_gridsearch check_psa}
    stamp "checks done"
    gpu_psa_alternate "$logs"
    if [ -n "${NCU:-}" ]; then gpu_psa_ncu "$logs" $NCU; fi
    tar -czf "$out/$1.tar.gz" -C "$out" logs
    exit $status
}

# gpu_psa_rounds OUT: bench-psa --rounds 40 (the replay chain's batch sizes) in OUT/rounds.txt, its blocks shown.
gpu_psa_rounds() {
    build/bin/bench-psa --basis build/cache/default.basis --searches 262144 --rounds 40 > "$1/rounds.txt" 2>&1 ||
        status=1
    grep -E "rounds,|^\| a block|same|FAILED" "$1/rounds.txt"
    stamp "rounds done"
}

# gpu_has STEP: whether the calling script's $steps names STEP.
gpu_has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }

# gpu_psa_steps OUT: gpu_psa_bench, then gpu_psa_rounds, each when $steps names it (bench, rounds).
gpu_psa_steps() {
    if gpu_has bench; then gpu_psa_bench "$1"; fi
    if gpu_has rounds; then gpu_psa_rounds "$1"; fi
}

# gpu_psa_ncu OUT MODE...: ncu of one chunk of search_tiles_pruned<float, MODE> in bench-psa's large batch (its 11th
# launch), for each MODE (gridsearch_gpu.h's GS_PRUNE_*), in OUT/ncu-MODE.txt, its key lines shown; the program is
# $gpu_psa_ncu_bin where set (another tree's), else build/bin/bench-psa.
gpu_psa_ncu() {
    gpu_psa_ncu_out=$1
    shift
    for m in "$@"; do
        timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:search_tiles_prunedIfLi${m}E" \
            --launch-skip 10 --launch-count 1 \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
            --section InstructionStats --section Occupancy --section SchedulerStats "${gpu_psa_ncu_bin:-build/bin/bench-psa}" \
            --basis build/cache/default.basis --searches 262144 --cpu 16 --naive 1 --ladder 1 --gpu-prune \
            > "$gpu_psa_ncu_out/ncu-$m.txt" 2>&1
        grep -E "search_tiles_pruned|Duration|Issue Slots Busy|Executed Ipc A|Achieved Occ|Issued Instructions  |No Eligible|Issued Warp|Eligible Warps|Warp Cycles" \
            "$gpu_psa_ncu_out/ncu-$m.txt" | head -n 16
        stamp "ncu $m done"
    done
}
