#!/usr/bin/env bash
# run-checks.sh: runs every Check suite given, prints each suite's summary, and a total line; fails on any failure.
set -u
total_pass=0 total_fail=0 failed_suites=()
for t in "$@"; do
    name=$(basename "$t")
    out=$(CK_VERBOSITY=${CK_VERBOSITY:-normal} "$t" 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -v '^narwhal\|^\[' | sed "s/^/[$name] /" | grep -E 'Checks:|:[EF]:|skip' || true
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [0-9]+' | tail -n 1)
    checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    fails=$(sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' <<<"$line")
    if [ -z "$line" ]; then
        echo "[$name] no Check summary (exit $rc): the suite crashed or did not run"
        printf '%s\n' "$out" | tail -n 20
        total_fail=$((total_fail + 1)); failed_suites+=("$name"); continue
    fi
    f=$(( ${fails% *} + ${fails#* } ))
    total_pass=$((total_pass + checks - f)); total_fail=$((total_fail + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then failed_suites+=("$name"); fi
done
echo "checks: $total_pass passed, $total_fail failed"
if [ ${#failed_suites[@]} -gt 0 ]; then echo "failing suites: ${failed_suites[*]}"; exit 1; fi
