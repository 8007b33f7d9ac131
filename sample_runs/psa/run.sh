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
    cat > "$work/accuracy.gp" << EOF
set terminal pngcairo size 900,600
set output '$keep/accuracy.png'
set title 'PSA position resolution, single-interaction crystals ($search search, $label)'
set xlabel 'energy deposited, keV'
set ylabel 'RMS of found - true, mm'
set logscale x
set xrange [40:2500]
set yrange [0:10]
set key top right
set grid
plot '$keep/accuracy.csv' using 1:3 with linespoints title 'x', \
     '' using 1:4 with linespoints title 'y', \
     '' using 1:5 with linespoints title 'z', \
     2.7 + 6.2 * sqrt(100.0 / x) with lines dashtype 2 title 'AGATA measured sigma(E) (Siciliano 2021)'
EOF
    gnuplot "$work/accuracy.gp"
else
    echo "run.sh: no gnuplot here: accuracy.csv only" >> "$keep/run.log"
fi
grep -E '^\[PSA\]|wall time|^psa ' "$keep/run.log"
cat "$keep/accuracy.md"
