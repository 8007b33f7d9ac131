#!/usr/bin/env bash
# soak.sh: a long run of the whole chain (generator -> psa -> builder -> tracker -> histo -> writer) with its memory, open files and frame balance sampled over time, and the verdict: flat, exact.
# usage: sample_runs/soak/soak.sh [CRYSTAL_EVENTS [OUT]]      from the repository root, after make (and make basis)
#   CRYSTAL_EVENTS  data:crystal frames to push through (default 10000000); the generator's Events is set
#                   from a calibration run of 2,000 events so that at least that many come
#   OUT             the record's folder (default sample_runs/soak/run-DATE)
# Environment: BUILD (default build), BASIS (default build/cache/default.basis), MODE (pipelined, the
#   default, or sequential), EVERY (seconds between samples, default 2), PORT (the monitor's, default 18931),
#   DEVICE (the actors' Device key, default auto: the GPU where there is one).
# Samples (OUT/samples.tsv, one line every EVERY s): seconds, the process's RSS (kB) and open descriptors
# (/proc/PID/fd), then, with the live monitor (narwhal built with libmicrohttpd), crystal-events so far and
# per link "out-in": the frames an actor emitted less those its reader took (the frames in flight).
# Verdict (OUT/verdict.txt; exit 1 when any fails):
#   - RSS flat: after warm-up (the first 20 % of the samples) the RSS grows by at most 5 % + 16 MB;
#   - open descriptors flat: after warm-up they vary by at most 2;
#   - frames in flight bounded while running, and 0 on every link at the end (the run's table:
#     every frame an actor emitted was taken by its reader), the crystal-events at least CRYSTAL_EVENTS;
#   - `narwhal summary` on the output with the run's report: every frame accounted for (its balance checks).
set -uo pipefail
target=${1:-10000000}
out=${2:-sample_runs/soak/run-$(date +%Y%m%d-%H%M)}
BUILD=${BUILD:-build}
BASIS=${BASIS:-build/cache/default.basis}
MODE=${MODE:-pipelined}
EVERY=${EVERY:-2}
PORT=${PORT:-18931}
DEVICE=${DEVICE:-auto}
narwhal=$BUILD/bin/narwhal

fail() { echo "soak: $*" >&2; exit 1; }
[ -x "$narwhal" ] || fail "$narwhal is missing: run make first"
[ -f "$BASIS" ] || fail "the basis $BASIS is missing: make basis (or BASIS=...)"
mkdir -p "$out" || fail "cannot make $out"
out=$(cd "$out" && pwd)
work=$out/work
rm -rf "$work"
mkdir -p "$work/conf"
pipeline=()
[ "$MODE" = pipelined ] && pipeline=(--pipeline)

# the shipped full chain's settings, with paths, devices and the run's size overlaid
confs() {
    local events=$1
    printf '%s\n' "Basis $BASIS" "Events $events" "Source cascade" "Output crystal truth" >"$work/conf/Generator.conf"
    printf '%s\n' "Basis $BASIS" "Device $DEVICE" >"$work/conf/PSA.conf"
    printf '%s\n' "Device $DEVICE" "KeepInput true" >"$work/conf/Tracker.conf" # the summary follows the PSA's frames to the file
    printf '%s\n' "OutputDir $work/histo" "Device $DEVICE" "Plot none" >"$work/conf/Histo.conf"
    printf '%s\n' "File $work/output.adf" >"$work/conf/ADFWriter.conf"
}

# the crystal-events of a finished run, from its report (narwhal run --report: the generator's frames by key)
crystal_frames() { awk -F'\t' '$1 == "kind" && $2 == "generator" && $4 == "narwhal:crystal" { print $5 }' "$1"; }

# ---- calibration: crystal frames per event
confs 2000
"$narwhal" run topologies/full_chain.xml --actors "$BUILD/actors" --conf "$work/conf" --report "$work/calibration.tsv" \
    --quiet >"$work/calibration.log" 2>&1 || { tail -n 20 "$work/calibration.log" >&2; fail "the calibration run failed"; }
per_event=$(crystal_frames "$work/calibration.tsv")
[ -n "$per_event" ] && [ "$per_event" -gt 0 ] || fail "no crystal frames counted in $work/calibration.tsv (its format?)"
events=$(awk -v t="$target" -v c="$per_event" 'BEGIN { printf "%d", t * 2000 / c * 1.02 + 1 }')
echo "soak: $per_event crystal frames per 2000 events: Events $events for $target crystal-events ($MODE, Device $DEVICE)"
confs "$events"
rm -rf "$work/histo" "$work/output.adf"

{
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(free -g | awk '/Mem:/ {print $2}') GiB"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
    echo "run: topologies/full_chain.xml $MODE, Events $events, basis $BASIS, Device $DEVICE, target $target crystal-events"
    echo "started: $(date -u +%FT%TZ)"
} >"$out/machine.txt"

# ---- the run, sampled (the live monitor gives the counts; a narwhal built without libmicrohttpd refuses
# --monitor at once, and then runs without it)
run() {
    "$narwhal" run topologies/full_chain.xml --actors "$BUILD/actors" --conf "$work/conf" --report "$out/report.tsv" \
        "${pipeline[@]}" --progress 60 "$@" >"$out/run.log" 2>&1 &
    pid=$!
}
run --monitor "$PORT"
sleep 2
if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    echo "soak: the run with --monitor ended at once ($(grep -m1 -i monitor "$out/run.log")): without it, memory and descriptors only"
    PORT=
    run
fi

# GET path from the monitor, the body only (bash's /dev/tcp: no curl needed)
api() {
    local body
    exec 3<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || return 1
    printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$1" >&3
    body=$(cat <&3)
    exec 3<&-
    printf '%s' "${body#*$'\r\n\r\n'}"
}

# "out-in" per link of the chain (an actor's frames_out less the next one's frames_in), from /api/actors
in_flight() {
    api /api/actors | grep -o '"frames_in":[0-9]*,"frames_out":[0-9]*' |
        sed -E 's/"frames_in":([0-9]+),"frames_out":([0-9]+)/\1 \2/' |
        awk 'NR > 1 { printf "%s%d", sep, prev_out - $1; sep = " " } { prev_out = $2 } END { print "" }'
}

printf 'seconds\trss_kb\tfds\tcrystal_events\tin_flight_per_link\n' >"$out/samples.tsv"
start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    ce=- flight=-
    if [ -n "$PORT" ]; then
        ce=$(api /api/status | grep -o '"crystal_events":[0-9]*' | cut -d: -f2)
        flight=$(in_flight)
    fi
    [ -n "$rss" ] && printf '%.1f\t%s\t%s\t%s\t%s\n' "$(awk -v now="$(date +%s.%N)" -v t0="$start" 'BEGIN { print now - t0 }')" "$rss" "$fds" "${ce:--}" \
        "${flight:--}" >>"$out/samples.tsv"
    sleep "$EVERY"
done
wait "$pid"
rc=$?
echo "ended: $(date -u +%FT%TZ), exit status $rc" >>"$out/machine.txt"
tail -n 30 "$out/run.log" >"$out/run-tail.log"

# ---- the verdict
verdict=$out/verdict.txt
: >"$verdict"
ok=1
say() { echo "soak: $*" | tee -a "$verdict"; }
check() { if [ "$1" = 1 ]; then say "ok: $2"; else say "FAILED: $2"; ok=0; fi; }

check "$([ "$rc" -eq 0 ] && echo 1)" "the run ended with status $rc"
n=$(($(wc -l <"$out/samples.tsv") - 1))
if [ "$n" -ge 5 ]; then
    read -r warm rss_warm rss_max fd_min fd_max < <(awk -F'\t' -v n="$n" 'NR == 1 { next }
        { k = NR - 1 } k == int(n / 5) + 1 { w = $1; r0 = $2 }
        k > int(n / 5) { if ($2 > rmax) rmax = $2; if (fmin == "" || $3 < fmin) fmin = $3; if ($3 > fmax) fmax = $3 }
        END { print w, r0, rmax, fmin, fmax }' "$out/samples.tsv")
    grow=$((rss_max - rss_warm))
    limit=$((rss_warm / 20 + 16384))
    check "$([ "$grow" -le "$limit" ] && echo 1)" \
        "RSS after warm-up (${warm} s): $((rss_warm / 1024)) MB, at most $((rss_max / 1024)) MB (grew $((grow / 1024)) MB; allowed $((limit / 1024)) MB)"
    check "$([ $((fd_max - fd_min)) -le 2 ] && echo 1)" "open descriptors after warm-up: $fd_min to $fd_max"
    if [ -n "$PORT" ]; then
        worst=$(awk -F'\t' 'NR > 1 && $5 != "-" { n = split($5, v, " "); for (i = 1; i <= n; i++) if (v[i] > m) m = v[i] }
            END { print m + 0 }' "$out/samples.tsv")
        say "frames in flight on one link, at most: $worst"
    fi
else
    say "only $n samples: the run was too short to judge memory and descriptors"
    ok=0
fi
crystals=$(crystal_frames "$out/report.tsv")
check "$([ "${crystals:-0}" -ge "$target" ] && echo 1)" "crystal-events through the chain: ${crystals:-?} (target $target)"
# every link of the run's table: what an actor emitted its reader took
unbalanced=$(awk -F'\t' '$1 == "actor" { name[++n] = $2; fin[n] = $5; fout[n] = $6 }
    END { for (i = 2; i <= n; i++) if (fout[i - 1] != fin[i]) printf "%s emitted %s frames, %s took %s; ", name[i - 1], fout[i - 1], name[i], fin[i] }' \
    "$out/report.tsv")
check "$([ -z "$unbalanced" ] && grep -q '^actor' "$out/report.tsv" && echo 1)" \
    "every link balanced at the end (frames out of each actor = frames into the next)${unbalanced:+: $unbalanced}"
"$narwhal" summary "$work/output.adf" --report "$out/report.tsv" >"$out/summary.txt" 2>&1
src=$?
check "$([ "$src" -eq 0 ] && echo 1)" "narwhal summary: frames balanced from the generator to the file (exit $src; summary.txt)"
[ -n "${SOAK_KEEP:-}" ] || rm -rf "$work"
[ "$ok" = 1 ] && say "verdict: flat and exact" || say "verdict: FAILED"
[ "$ok" = 1 ]
