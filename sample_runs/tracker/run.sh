#!/bin/sh
# run.sh: records the tracker's sample runs under sample_runs/tracker/LABEL/: the truth chain, the GammaEvents -> builder -> tracker chain, bench-tracker and the efficiency study.
#   sh sample_runs/tracker/run.sh LABEL [DEVICE] [EVENTS]   (DEVICE: auto, gpu or cpu; EVENTS: 20000)
set -eu
label=${1:?usage: run.sh LABEL [DEVICE] [EVENTS]}
device=${2:-auto}
events=${3:-20000}
BUILD=${BUILD:-build}
work=$BUILD/tracker-sample/$label
keep=sample_runs/tracker/$label
here=sample_runs/tracker
rm -rf "$work" "$keep"
mkdir -p "$work/conf" "$keep"

# 1. generator (truth only, 1332.492 keV, M = 1) -> tracker (smeared truth) -> tracked spectrum
sed -e "s|^Events .*|Events $events|" -e "s|^Output .*|Output truth|" \
    -e "s|^GammaEvents .*|GammaEvents $work/events.gev|" topologies/conf/Generator.conf > "$work/conf/Generator.conf"
sed -e "s|^Input .*|Input truth|" -e "s|^Device .*|Device $device|" topologies/conf/Tracker.conf \
    > "$work/conf/Tracker.conf"
cat > "$work/conf/Histo.conf" <<CONF
OutputDir $work/histo
Formats   spe csv
Histogram gamma tracked.e sum 2048 0 2048
Plot      gamma
CONF
"$BUILD/bin/narwhal" run $here/truth.xml --actors "$BUILD/actors" --conf "$work/conf" > "$keep/truth-run.log" 2>&1
cp "$work/histo/gamma.csv" "$keep/tracked-spectrum.csv"
if [ -e "$work/histo/gamma.png" ]; then cp "$work/histo/gamma.png" "$keep/tracked-spectrum.png"; fi

# 2. the same events as a GammaEvents file -> ge2adf (smeared, one frame per crystal) -> builder -> tracker
"$BUILD/bin/ge2adf" --smear 2.7 6.2 --unbuilt "$work/events.gev" "$work/psa.adf" > "$keep/ge2adf.log" 2>&1
printf 'File %s\n' "$work/psa.adf" > "$work/conf/ADFReader.conf"
printf 'File %s\n' "$work/tracked.adf" > "$work/conf/ADFWriter.conf"
sed -e "s|^Device .*|Device $device|" topologies/conf/Tracker.conf > "$work/conf/Tracker.conf"
cp topologies/conf/Builder.conf "$work/conf/"
"$BUILD/bin/narwhal" run $here/built.xml --actors "$BUILD/actors" --conf "$work/conf" > "$keep/built-run.log" 2>&1
"$BUILD/bin/narwhal" dump "$work/tracked.adf" --max 12 > "$keep/tracked-dump.txt" 2>&1

# 3. the benchmark and the efficiency study on this machine
"$BUILD/bin/bench-tracker" > "$keep/bench.log" 2>&1
"$BUILD/bin/bench-tracker" --study "$keep/study" --set table --events1 100000 --events30 3000 > "$keep/study.log" 2>&1
cat "$keep/truth-run.log" "$keep/built-run.log" "$keep/bench.log" "$keep/study.log"
