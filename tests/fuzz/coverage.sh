#!/usr/bin/env bash
# coverage.sh: replays each fuzz target's corpus and seeds through its llvm-cov build; a line per target: the share of its code under test's lines and regions run.
# usage: tests/fuzz/coverage.sh COVDIR FUZZDIR TARGET...   (make fuzz-coverage)
#   COVDIR/bin/TARGET built with -fprofile-instr-generate -fcoverage-mapping; FUZZDIR/corpus-TARGET the
#   corpus make fuzz grew.  COVDIR/TARGET.txt: llvm-cov's report per file.
set -u
cov=$1 fuzz=$2
shift 2
profdata=$(command -v llvm-profdata || ls /usr/bin/llvm-profdata-* 2>/dev/null | tail -n 1)
llvmcov=$(command -v llvm-cov || ls /usr/bin/llvm-cov-* 2>/dev/null | tail -n 1)
[ -n "$profdata" ] && [ -n "$llvmcov" ] || { echo "coverage: llvm-profdata and llvm-cov are needed (apt-get install llvm)"; exit 1; }

# the sources a target exercises: the actor's own folder and the kit, or the library it tests
sources() {
    case $1 in
    fuzz_psa) echo actors/psa/*.c kernels/psa_refine.h kernels/gridsearch_fom.h ;;
    fuzz_builder) echo actors/builder/*.c ;;
    fuzz_tracker) echo actors/tracker/*.c kernels/tracker_*.h ;;
    fuzz_histo | fuzz_histo_sink) echo actors/histo/*.c ;;
    fuzz_adf_writer) echo actors/io/adf_writer.c actors/kit/publish.c ;;
    fuzz_adf_reader) echo actors/io/adf_reader.c ;;
    fuzz_dump) echo emulator/dump.c ;;
    fuzz_summary) echo analysis/summary*.c ;;
    fuzz_adf) echo adf/*.c ;;
    fuzz_topology) echo emulator/topology.c emulator/graph.c ;;
    *) echo "" ;;
    esac
}

for name in "$@"; do
    corpus=()
    for d in "$fuzz/corpus-$name" "tests/fuzz/seeds-$name"; do [ -d "$d" ] && corpus+=("$d"); done
    rm -f "$cov/$name".profraw*
    LLVM_PROFILE_FILE="$cov/$name.profraw" "$cov/bin/$name" -runs=0 -close_fd_mask=2 "${corpus[@]}" \
        >"$cov/$name.replay.log" 2>&1 || { echo "coverage $name: the replay failed: $cov/$name.replay.log"; continue; }
    "$profdata" merge -sparse -o "$cov/$name.profdata" "$cov/$name.profraw"
    # shellcheck disable=SC2046
    "$llvmcov" report "$cov/bin/$name" -instr-profile="$cov/$name.profdata" $(sources "$name") >"$cov/$name.txt"
    inputs=$(find "${corpus[@]}" -type f | wc -l)
    awk -v n="$name" -v k="$inputs" '/^TOTAL/ { printf "coverage %-16s %6s inputs: lines %s of %s run (%s), regions %s (%s)\n", n, k, $8 - $9, $8, $10, $2 - $3, $4 }' "$cov/$name.txt"
done
