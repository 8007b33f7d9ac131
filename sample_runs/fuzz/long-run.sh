#!/usr/bin/env bash
# long-run.sh: issue 17's long fuzz run: every target for SECONDS (default 600), JOBS at a time, then each corpus's coverage of its sources; the record in OUT.
# usage: sample_runs/fuzz/long-run.sh [SECONDS [JOBS [OUT]]]   from the repository root (OUT: sample_runs/fuzz/run-DATE)
# The corpora grow in build/fuzz/ (kept between runs); OUT gets the machine, make fuzz's and make
# fuzz-coverage's lines, each target's final libFuzzer statistics and the total of executions.
set -uo pipefail
secs=${1:-600} jobs=${2:-2} out=${3:-sample_runs/fuzz/run-$(date +%Y%m%d-%H%M)}
mkdir -p "$out"
{
    echo "commit: ${NARWHAL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "started: $(date -u +%FT%TZ)"
    echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "clang: $(clang --version | head -n 1)"
    echo "per target: $secs s, $jobs at a time"
} >"$out/machine.txt"
make --no-print-directory fuzz FUZZ_SECONDS="$secs" FUZZ_JOBS="$jobs" 2>&1 | grep -E '^(fuzz|narwhal)|^(  |==|SUMMARY)' | tee "$out/fuzz.txt"
echo "ended: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
make --no-print-directory fuzz-coverage 2>&1 | grep -E '^coverage' | tee "$out/coverage.txt"
mkdir -p "$out/stats"
for log in build/fuzz/fuzz_*.log; do
    name=$(basename "$log" .log)
    { grep -E '^(#[0-9]+ +DONE|stat::|Done )' "$log"; } >"$out/stats/$name.txt"
    cp "build/fuzz-cov/$name.txt" "$out/stats/$name.coverage.txt" 2>/dev/null
done
awk '/^stat::number_of_executed_units/ { n += $2 } END { printf "executions in all: %d\n", n }' build/fuzz/fuzz_*.log | tee -a "$out/fuzz.txt"
ls build/fuzz/artifacts/ 2>/dev/null | sed 's/^/artifact: /' | tee -a "$out/fuzz.txt"
