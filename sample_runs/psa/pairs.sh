#!/bin/sh
# pairs.sh: the PSA on own events with one or two interactions by class (issue 15: two hits in neighbouring segments): psa-pairs makes them, adf_reader -> psa -> adf_writer searches them with Neighbours off and iterate, psa-pairs scores them by class; results under sample_runs/psa/LABEL/.
#   sh sample_runs/psa/pairs.sh LABEL [EVENTS] [THREADS] [DEVICE]
#   EVENTS: 2000 (round the classes single, ring, sector, diagonal, far; 1332 keV, 25-75 % splits)
#   SEARCH=adaptive: the PSA's Search (full by default).
#   THREADS: the PSA's Threads (1: its CPU time per crystal); DEVICE: cpu (PSA.conf's Device)
set -eu
label=${1:?usage: pairs.sh LABEL [EVENTS] [THREADS] [DEVICE]}
events=${2:-2000}
threads=${3:-1}
device=${4:-cpu}
BUILD=${BUILD:-build}
work=$BUILD/psa-sample/$label
keep=sample_runs/psa/$label
rm -rf "$work" "$keep"
mkdir -p "$work" "$keep"
[ -f build/cache/default.basis ] || make --no-print-directory basis
"$BUILD/bin/psa-pairs" make -o "$work/events.adf" --events "$events"
for mode in off iterate; do
    mkdir -p "$work/$mode"
    printf 'File %s\n' "$work/events.adf" > "$work/$mode/ADFReader.conf"
    printf 'File %s\n' "$work/$mode/output.adf" > "$work/$mode/ADFWriter.conf"
    sed -e "s|^Device .*|Device     $device|" -e "s|^Threads .*|Threads    $threads|" \
        -e "s|^Neighbours .*|Neighbours $mode|" -e "s|^Search .*|Search     ${SEARCH:-full}|" \
        topologies/conf/PSA.conf > "$work/$mode/PSA.conf"
    cp "$work/$mode/PSA.conf" "$keep/PSA-$mode.conf"
    "$BUILD/bin/narwhal" run topologies/psa.xml --actors "$BUILD/actors" --conf "$work/$mode" \
        > "$keep/run-$mode.log" 2>&1
    "$BUILD/bin/psa-pairs" score "$work/$mode/output.adf" --csv "$keep/accuracy-$mode.csv" \
        > "$keep/accuracy-$mode.md"
    echo "== Neighbours $mode"
    grep -E 'searches on|time in process_block' "$keep/run-$mode.log"
    cat "$keep/accuracy-$mode.md"
done
