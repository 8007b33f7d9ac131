# gpu-common.sh: shell functions that the GPU machine's scripts (full_chain/gpu-run.sh, psa/chain-gpu.sh) source: the machine's description and the build.

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
    mkdir -p build/cache
    [ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis >> "$1/build.log" 2>&1
}
