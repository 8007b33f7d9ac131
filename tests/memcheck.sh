#!/usr/bin/env bash
# memcheck.sh: runs the replay chain, sequential and pipelined, under valgrind memcheck; prints a verdict line per mode and fails on any error or definite leak.
set -uo pipefail
BUILD=${BUILD:-build}
FRAMES=${MEMCHECK_FRAMES:-200}

fail() { echo "memcheck: $*" >&2; exit 1; }
command -v valgrind >/dev/null || fail "valgrind is not installed (apt-get install valgrind)"
for f in "$BUILD/bin/narwhal" "$BUILD/tests/mkadf" "$BUILD/actors/adf_reader.so" "$BUILD/actors/adf_writer.so"; do
    [ -e "$f" ] || fail "$f is missing: run 'make build-tests' first"
done

tmp=$(mktemp -d /tmp/narwhal-memcheck.XXXXXX) || fail "cannot create a temporary directory"
trap '[ -n "${MEMCHECK_KEEP:-}" ] || rm -rf "$tmp"' EXIT
mkdir "$tmp/conf"
"$BUILD/tests/mkadf" "$tmp/input.adf" "$FRAMES" >"$tmp/mkadf.log" 2>&1 ||
    { cat "$tmp/mkadf.log" >&2; fail "mkadf could not write the sample"; }
printf 'File "%s"\n' "$tmp/input.adf" >"$tmp/conf/ADFReader.conf"
printf 'File "%s"\n' "$tmp/output.adf" >"$tmp/conf/ADFWriter.conf"

# one run of the replay chain under memcheck; $1 names the mode, the rest are extra options
check_mode() {
    local mode=$1; shift
    rm -f "$tmp/output.adf"
    valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
        --log-file="$tmp/valgrind-$mode.log" \
        "$BUILD/bin/narwhal" run topologies/replay.xml --actors "$BUILD/actors" --conf "$tmp/conf" "$@" \
        >"$tmp/run-$mode.log" 2>&1
    local rc=$? log="$tmp/valgrind-$mode.log"
    local errors lost same=yes
    errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9,]+) errors.*/\1/p' "$log" | tail -n 1 | tr -d ,)
    lost=$(sed -nE 's/.*definitely lost: ([0-9,]+) bytes.*/\1/p' "$log" | tail -n 1 | tr -d ,)
    # valgrind omits the leak lines when every block was freed
    grep -q 'no leaks are possible' "$log" && lost=${lost:-0}
    [ -n "$errors" ] && [ -n "$lost" ] || { cat "$tmp/run-$mode.log" "$log" >&2; fail "no valgrind summary for the $mode run (exit $rc)"; }
    cmp -s "$tmp/input.adf" "$tmp/output.adf" || same=no
    echo "memcheck: $errors errors, $lost bytes definitely lost ($mode replay of $FRAMES events, exit status $rc, output equals input: $same)"
    if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$lost" -ne 0 ] || [ "$same" != yes ]; then
        tail -n 40 "$tmp/run-$mode.log" >&2
        grep -E '^==[0-9]+== ' "$log" | tail -n 60 >&2
        exit 1
    fi
}

check_mode sequential
check_mode pipelined --pipeline
