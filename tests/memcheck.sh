#!/usr/bin/env bash
# memcheck.sh: every actor under valgrind: the replay chain (small blocks, then 4 MiB blocks that the reader reads ahead) and the full chain (generator -> psa -> builder -> tracker -> histo -> writer), sequential and pipelined, under memcheck, the pipelined full chain, the large-block replay and a sequential replay whose outputs are counted on a thread of their own under helgrind; a verdict line per run, failing on any error or definite leak.
set -uo pipefail
BUILD=${BUILD:-build}
FRAMES=${MEMCHECK_FRAMES:-200}
EVENTS=${MEMCHECK_EVENTS:-12}
here=$(cd "$(dirname "$0")" && pwd)

fail() { echo "memcheck: $*" >&2; exit 1; }
command -v valgrind >/dev/null || fail "valgrind is not installed (apt-get install valgrind)"
for f in "$BUILD/bin/narwhal" "$BUILD/bin/basisgen" "$BUILD/tests/mkadf"; do
    [ -e "$f" ] || fail "$f is missing: run 'make build-tests' first"
done
for a in adf_reader adf_writer generator psa builder tracker histo; do
    [ -e "$BUILD/actors/$a.so" ] || fail "$BUILD/actors/$a.so is missing: run 'make build-tests' first"
done

tmp=$(mktemp -d /tmp/narwhal-memcheck.XXXXXX) || fail "cannot create a temporary directory"
trap '[ -n "${MEMCHECK_KEEP:-}" ] || rm -rf "$tmp"' EXIT

# the replay chain: mkadf's sample through adf_reader into adf_writer
mkdir "$tmp/replay"
"$BUILD/tests/mkadf" "$tmp/input.adf" "$FRAMES" >"$tmp/mkadf.log" 2>&1 ||
    { cat "$tmp/mkadf.log" >&2; fail "mkadf could not write the sample"; }
printf 'File "%s"\n' "$tmp/input.adf" >"$tmp/replay/ADFReader.conf"
printf 'File "%s"\n' "$tmp/replay.adf" >"$tmp/replay/ADFWriter.conf"

# the replay again with 4 MiB blocks, so that the reader reads each block ahead on a thread of its own
# (ReadAhead, adf/ahead.c; with smaller blocks it reads in the call): about 20 MB, five blocks
mkdir "$tmp/ahead"
"$BUILD/tests/mkadf" "$tmp/ahead-input.adf" "${MEMCHECK_AHEAD_FRAMES:-900}" >"$tmp/mkadf-ahead.log" 2>&1 ||
    { cat "$tmp/mkadf-ahead.log" >&2; fail "mkadf could not write the read-ahead sample"; }
printf 'File "%s"\nThreads 1\n' "$tmp/ahead-input.adf" >"$tmp/ahead/ADFReader.conf"
printf 'File "%s"\n' "$tmp/ahead.adf" >"$tmp/ahead/ADFWriter.conf"
sed 's|<size output_buffer="data1">1000000<|<size output_buffer="data1">4194304<|' topologies/replay.xml >"$tmp/replay-ahead.xml"
grep -q '>4194304<' "$tmp/replay-ahead.xml" || fail "no reader buffer size in topologies/replay.xml"

# the full chain on a coarse basis (check_chain's: 6 mm grid, 2 mm fields) and a few cascades; every
# OpenMP team of one thread (Threads 1, OMP_NUM_THREADS=1): see helgrind below
"$BUILD/bin/basisgen" --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o "$tmp/coarse.basis" \
    >"$tmp/basisgen.log" 2>&1 || { cat "$tmp/basisgen.log" >&2; fail "basisgen could not build the coarse basis"; }
mkdir "$tmp/chain"
printf '%s\n' "Basis $tmp/coarse.basis" "Seed 5" "Events $EVENTS" "Threads 1" "Source cascade" "Output crystal truth" \
    >"$tmp/chain/Generator.conf"
printf '%s\n' "Basis $tmp/coarse.basis" "Device cpu" "Threads 1" >"$tmp/chain/PSA.conf"
printf '%s\n' "Device cpu" "KeepInput true" >"$tmp/chain/Tracker.conf"
printf '%s\n' "OutputDir $tmp/histo" "Device cpu" "Threads 1" "Formats spe csv" "Plot none" \
    "Histogram gamma tracked.e sum 1024 0 2048" "Histogram hit psa.e sum 1024 0 2048" \
    "Histogram core crystal.core crystal 256 0 2048" >"$tmp/chain/Histo.conf"
printf 'File "%s"\n' "$tmp/chain.adf" >"$tmp/chain/ADFWriter.conf"
export OMP_NUM_THREADS=1

# check TOOL NAME TOPOLOGY CONF OUTPUT [options]: one run under valgrind's TOOL; the verdict line; OUTPUT is
# kept as NAME.adf to compare the modes
check() {
    local tool=$1 name=$2 topology=$3 conf=$4 output=$5
    shift 5
    local log="$tmp/$name.valgrind" flags=(--error-exitcode=1)
    [ "$tool" = memcheck ] && flags+=(--leak-check=full --errors-for-leak-kinds=definite)
    [ "$tool" = helgrind ] && flags+=(--suppressions="$here/helgrind.supp")
    rm -f "$output"
    valgrind --tool="$tool" "${flags[@]}" --log-file="$log" \
        "$BUILD/bin/narwhal" run "$topology" --actors "$BUILD/actors" --conf "$conf" "$@" >"$tmp/$name.log" 2>&1
    local rc=$? errors lost=0
    errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9,]+) errors.*/\1/p' "$log" | tail -n 1 | tr -d ,)
    if [ "$tool" = memcheck ]; then
        lost=$(sed -nE 's/.*definitely lost: ([0-9,]+) bytes.*/\1/p' "$log" | tail -n 1 | tr -d ,)
        grep -q 'no leaks are possible' "$log" && lost=${lost:-0} # valgrind omits the leak lines when all was freed
    fi
    [ -n "$errors" ] && [ -n "$lost" ] || { cat "$tmp/$name.log" "$log" >&2; fail "no valgrind summary for $name (exit $rc)"; }
    cp "$output" "$tmp/$name.adf" 2>/dev/null
    local what="$errors errors"
    [ "$tool" = memcheck ] && what+=", $lost bytes definitely lost"
    echo "memcheck: $tool: $what ($name, exit status $rc)"
    if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$lost" -ne 0 ] || [ ! -s "$output" ]; then
        tail -n 40 "$tmp/$name.log" >&2
        grep -E '^==[0-9]+== ' "$log" | tail -n 80 >&2
        exit 1
    fi
}

same() {
    cmp -s "$tmp/$1.adf" "$tmp/$2.adf" || fail "$1 and $2 wrote different output"
    echo "memcheck: $1 and $2 wrote the same output"
}

# sequentially, outputs counted beside the calls (NARWHAL_COUNT_THREAD on) here, on the loop's thread in the chain below
export NARWHAL_COUNT_THREAD=on
check memcheck replay-sequential topologies/replay.xml "$tmp/replay" "$tmp/replay.adf"
check helgrind replay-counted topologies/replay.xml "$tmp/replay" "$tmp/replay.adf"
export NARWHAL_COUNT_THREAD=off
check memcheck replay-pipelined topologies/replay.xml "$tmp/replay" "$tmp/replay.adf" --pipeline
cmp -s "$tmp/input.adf" "$tmp/replay-sequential.adf" || fail "the replay's output differs from its input"
same replay-sequential replay-pipelined
same replay-sequential replay-counted
check memcheck replay-ahead "$tmp/replay-ahead.xml" "$tmp/ahead" "$tmp/ahead.adf"
grep -q 'ReadAhead: [1-9][0-9]* large reads copied' "$tmp/replay-ahead.log" || fail "replay-ahead did not read ahead"
cmp -s "$tmp/ahead-input.adf" "$tmp/replay-ahead.adf" || fail "replay-ahead's output differs from its input"
check helgrind replay-ahead-helgrind "$tmp/replay-ahead.xml" "$tmp/ahead" "$tmp/ahead.adf" --pipeline
same replay-ahead replay-ahead-helgrind
check memcheck chain-sequential topologies/full_chain.xml "$tmp/chain" "$tmp/chain.adf"
check memcheck chain-pipelined topologies/full_chain.xml "$tmp/chain" "$tmp/chain.adf" --pipeline
same chain-sequential chain-pipelined
check helgrind chain-helgrind topologies/full_chain.xml "$tmp/chain" "$tmp/chain.adf" --pipeline
same chain-sequential chain-helgrind
