#!/bin/sh
# run.sh: records the generator's figures and speed: sim-validate for the 180-crystal array, timed runs of topologies/simulate.xml, a dump and a GammaEvents excerpt, under sample_runs/sim/.
#   sh sample_runs/sim/run.sh [EVENTS]      (EVENTS per timed run: 40000)
set -eu
events=${1:-40000}
BUILD=${BUILD:-build}
work=$BUILD/sim-sample
keep=sample_runs/sim
basis=$BUILD/cache/default.basis
rm -rf "$work"
mkdir -p "$work/conf" "$keep"
[ -f "$basis" ] || "$BUILD/bin/basisgen" -o "$basis" > "$keep/basisgen.log" 2>&1

# the physics: full absorption, interactions and crystals per γ
{
    "$BUILD/bin/sim-validate" --events 1000000 --energy 1332.492
    "$BUILD/bin/sim-validate" --events 1000000 --energy 661.657
    "$BUILD/bin/sim-validate" --events 200000 --energy 4000
} > "$keep/figures.txt" 2>&1

# speed: the generator alone in the chain (generator -> adf_writer), 1332 keV, traces and truth
printf 'File %s\n' "$work/sim.adf" > "$work/conf/ADFWriter.conf"
: > "$keep/speed.log"
for threads in 1 2; do
    sed -e "s|^Events .*|Events $events|" -e "s|^Threads .*|Threads $threads|" \
        -e "s|^GammaEvents .*|GammaEvents $work/GammaEvents.$threads|" \
        topologies/conf/Generator.conf > "$work/conf/Generator.conf"
    echo "== Threads $threads, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$keep/speed.log"
    "$BUILD/bin/narwhal" run topologies/simulate.xml --actors "$BUILD/actors" --conf "$work/conf" \
        >> "$keep/speed.log" 2>&1
    cp "$work/sim.adf" "$work/sim.$threads.adf"
done
cmp "$work/sim.1.adf" "$work/sim.2.adf"
cmp "$work/GammaEvents.1" "$work/GammaEvents.2"
echo "1 and 2 threads wrote the same bytes (ADF and GammaEvents)" >> "$keep/speed.log"

"$BUILD/bin/narwhal" dump "$work/sim.1.adf" --max 16 > "$keep/dump.txt"
head -n 40 "$work/GammaEvents.1" > "$keep/GammaEvents-head.txt"
cp "$work/conf/Generator.conf" "$keep/Generator.conf"
grep -h "Generator\] emitted\|^==" "$keep/speed.log"
cat "$keep/figures.txt"
