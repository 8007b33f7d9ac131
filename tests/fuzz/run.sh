#!/usr/bin/env bash
# run.sh: runs libFuzzer targets for a time each, some at once; a line per target (runs, rate, corpus, result) and exit 1 on any finding.
# usage: tests/fuzz/run.sh DIR SECONDS JOBS TARGET...
#   DIR/bin/TARGET is run on DIR/corpus-TARGET (kept between runs, grown) seeded from tests/fuzz/seeds-TARGET;
#   its log is DIR/TARGET.log, what it finds DIR/artifacts/TARGET-*.  An input that takes more than
#   FUZZ_TIMEOUT seconds (default 25) or asks for more than FUZZ_RSS_MB (default 2048) is a finding too.
#   Extra libFuzzer options may come in FUZZ_OPTIONS.
set -u
dir=$1 secs=$2 jobs=$3
shift 3
mkdir -p "$dir/artifacts"

run_one() {
    local name=$1 corpus="$dir/corpus-$1" seeds="tests/fuzz/seeds-$1"
    mkdir -p "$corpus"
    [ -d "$seeds" ] || seeds=
    # -close_fd_mask=2: the actors' log lines go nowhere; libFuzzer's and the sanitizers' reports stay
    # shellcheck disable=SC2086
    "$dir/bin/$name" -max_total_time="$secs" -print_final_stats=1 -close_fd_mask=2 \
        -timeout="${FUZZ_TIMEOUT:-25}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
        -artifact_prefix="$dir/artifacts/$name-" ${FUZZ_OPTIONS:-} "$corpus" $seeds >"$dir/$name.log" 2>&1
    echo $? >"$dir/$name.rc"
}

# the line of one finished target, from its log and its corpus; 1 when it found something
report() {
    local name=$1 log="$dir/$1.log" rc runs rate rss files bytes
    rc=$(cat "$dir/$name.rc")
    runs=$(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)/\1/p' "$log" | tail -n 1)
    rate=$(sed -nE 's/^stat::average_exec_per_sec: +([0-9]+)/\1/p' "$log" | tail -n 1)
    rss=$(sed -nE 's/^stat::peak_rss_mb: +([0-9]+)/\1/p' "$log" | tail -n 1)
    files=$(find "$dir/corpus-$name" -type f | wc -l)
    bytes=$(du -sb "$dir/corpus-$name" | cut -f1)
    if [ "$rc" -eq 0 ]; then
        printf 'fuzz %-16s %12s runs in %s s (%s/s), corpus %s inputs (%s bytes), peak RSS %s MB: ok\n' \
            "$name" "${runs:-?}" "$secs" "${rate:-?}" "$files" "$bytes" "${rss:-?}"
        return 0
    fi
    printf 'fuzz %-16s FOUND SOMETHING (exit %s) after %s runs; its log %s ends:\n' "$name" "$rc" "${runs:-?}" "$log"
    grep -vE '^(#[0-9]+|INFO:|stat::)' "$log" | tail -n 40
    local unit
    unit=$(sed -nE 's/.*Test unit written to (.*)/\1/p' "$log" | tail -n 1)
    if [ -n "$unit" ]; then
        # the target's own message went to the closed stderr: the input once more, stderr kept
        echo "fuzz $name: $dir/bin/$name $unit says:"
        "$dir/bin/$name" "$unit" 2>&1 | grep -E 'invariant|runtime error|ERROR: AddressSanitizer|SUMMARY' | head -n 5
    fi
    return 1
}

names=("$@")
failed=0
for name in "${names[@]}"; do
    [ -x "$dir/bin/$name" ] || { echo "fuzz $name: $dir/bin/$name is not built" >&2; exit 1; }
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    echo "fuzz $name: $secs s"
    run_one "$name" &
done
wait
for name in "${names[@]}"; do
    report "$name" || failed=1
done
exit $failed
