#!/bin/sh
# run.sh: records a PSA run on simulated events (generator -> psa -> adf_writer): the log, the speed, and the accuracy against the truth by energy, with its plot, under sample_runs/psa/LABEL/.
#   sh sample_runs/psa/run.sh LABEL [DEVICE] [EVENTS] [SEARCH] [LINES...]
#   DEVICE: auto, gpu or cpu (auto); EVENTS: 20000; SEARCH: full or adaptive (full);
#   LINES: the γ energies in keV, equal intensities (100 200 300 500 662 1000 1332 2000)
set -eu
label=${1:?usage: run.sh LABEL [DEVICE] [EVENTS] [SEARCH] [LINES...]}
device=${2:-auto}
events=${3:-20000}
search=${4:-full}
[ $# -gt 4 ] && shift 4 || set -- 100 200 300 500 662 1000 1332 2000
lines=""
for e in "$@"; do lines="$lines $e 1"; done
BUILD=${BUILD:-build}
work=$BUILD/psa-sample/$label
keep=sample_runs/psa/$label
rm -rf "$work" "$keep"
mkdir -p "$work/conf" "$keep"
[ -f build/cache/default.basis ] || make --no-print-directory basis
# the chain: the generator feeds psa directly
sed -e 's|<library>adf_reader.so</library>|<library>generator.so</library>|' \
    -e 's|<name>reader</name>|<name>generator</name>|' \
    -e 's|source_buffer="data1">reader<|source_buffer="data1">generator<|' \
    topologies/psa.xml > "$work/simulate_psa.xml"
sed -e "s|^Events .*|Events     $events|" -e "s|^Lines .*|Lines     $lines|" \
    topologies/conf/Generator.conf > "$work/conf/Generator.conf"
sed -e "s|^Device .*|Device     $device|" -e "s|^Search .*|Search     $search|" \
    -e "s|^SearchLog .*|SearchLog  $work/search.log|" \
    topologies/conf/PSA.conf > "$work/conf/PSA.conf"
printf 'File %s\n' "$work/output.adf" > "$work/conf/ADFWriter.conf"
cp "$work/conf/Generator.conf" "$work/conf/PSA.conf" "$keep/"
"$BUILD/bin/narwhal" run "$work/simulate_psa.xml" --actors "$BUILD/actors" --conf "$work/conf" \
    > "$keep/run.log" 2>&1
"$BUILD/bin/bench-psa" --accuracy "$work/output.adf" --csv "$keep/accuracy.csv" > "$keep/accuracy.md"
head -n 3 "$work/search.log" > "$keep/search-log-head.txt"
if command -v gnuplot > /dev/null; then
    gnuplot -e "csv='$keep/accuracy.csv'; png='$keep/accuracy.png'; name='$search search, $label'" \
        sample_runs/psa/plot.gp
else
    echo "run.sh: no gnuplot here: accuracy.csv only (sample_runs/psa/plot.gp draws it)" >> "$keep/run.log"
fi
grep -E '^\[PSA\]|wall time|^psa ' "$keep/run.log"
cat "$keep/accuracy.md"
