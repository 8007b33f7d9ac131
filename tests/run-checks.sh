#!/usr/bin/env bash
# run-checks.sh: runs every Check suite given, prints each suite's summary, and the total line "N passed, N failed, N skipped"; fails on any failure.
# A test that cannot run prints "SKIP <test>: <why>" (testkit.h's TK_SKIP) and returns: Check counts
# it as passed, so its line is counted here and taken off the passes.
set -u
total_pass=0 total_fail=0 total_skip=0 failed_suites=()
for t in "$@"; do
    name=$(basename "$t")
    out=$(CK_VERBOSITY=${CK_VERBOSITY:-normal} "$t" 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -v '^narwhal\|^\[' | sed "s/^/[$name] /" | grep -E 'Checks:|:[EF]:|SKIP ' || true
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [0-9]+' | tail -n 1)
    checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    fails=$(sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' <<<"$line")
    if [ -z "$line" ]; then
        echo "[$name] no Check summary (exit $rc): the suite crashed or did not run"
        printf '%s\n' "$out" | tail -n 20
        total_fail=$((total_fail + 1)); failed_suites+=("$name"); continue
    fi
    f=$(( ${fails% *} + ${fails#* } ))
    s=$(printf '%s\n' "$out" | grep -c '^SKIP ' || true)
    total_pass=$((total_pass + checks - f - s)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then failed_suites+=("$name"); fi
done
if [ ${#failed_suites[@]} -gt 0 ]; then echo "failing suites: ${failed_suites[*]}"; fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ ${#failed_suites[@]} -eq 0 ]
