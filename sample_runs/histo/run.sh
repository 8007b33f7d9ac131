#!/bin/sh
# run.sh: records a run of the histogram chain (topologies/histo.xml) on a mkadf sample: log, timing, plots, a spectrum, under sample_runs/histo/LABEL/.
#   sh sample_runs/histo/run.sh LABEL [DEVICE] [EVENTS]     (DEVICE: auto, gpu or cpu; EVENTS: 2000)
set -eu
label=${1:?usage: run.sh LABEL [DEVICE] [EVENTS]}
device=${2:-auto}
events=${3:-2000}
BUILD=${BUILD:-build}
work=$BUILD/histo-sample/$label
keep=sample_runs/histo/$label
rm -rf "$work" "$keep"
mkdir -p "$work/conf" "$keep"
"$BUILD/tests/mkadf" "$work/input.adf" "$events" > "$keep/mkadf.log" 2>&1
printf 'File %s\n' "$work/input.adf" > "$work/conf/ADFReader.conf"
printf 'File %s\n' "$work/output.adf" > "$work/conf/ADFWriter.conf"
sed -e "s|^OutputDir .*|OutputDir $work/histo|" -e "s|^Device .*|Device $device|" \
    topologies/conf/Histo.conf > "$work/conf/Histo.conf"
cp "$work/conf/Histo.conf" "$keep/Histo.conf"
"$BUILD/bin/narwhal" run topologies/histo.xml --actors "$BUILD/actors" --conf "$work/conf" \
    > "$keep/run.log" 2>&1
cmp "$work/input.adf" "$work/output.adf"
echo "output equals input: histo passed every frame on unchanged" \
    >> "$keep/run.log"
cp "$work/histo/gamma.spe" "$work/histo/gamma.csv" "$keep/"
for png in "$work"/histo/*.png; do # none where gnuplot is missing (the log says so)
    if [ -e "$png" ]; then cp "$png" "$keep/"; fi
done
cat "$keep/run.log"
