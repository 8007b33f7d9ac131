#!/bin/sh
# host-actors.sh: the host-side actors' cost in sequential mode, without the PSA's: the PSA's output of a replay input made once, then read back through reader -> builder -> tracker -> histo -> writer, RUNS times, each actor's seconds in process_block (the least of the runs: the machine's noise is one-sided) and the outputs' checksums; with BEFORE=DIR the same with another tree's actors, alternating, on the same input.
#   sh sample_runs/bench/host-actors.sh [EVENTS] [REPEAT]     (EVENTS: generator events, 20000; REPEAT: passes over the PSA's output, 10)
#   RUNS=N (3), BUILD (build), BEFORE=DIR (a tree built in DIR/build), WORK (/dev/shm/narwhal-host-actors when /dev/shm exists)
# The PSA runs once, on its default device; the tracker and histo on theirs.  The report prints
# "| actor | s (this tree) | s (before) |" and whether every output file is byte-identical between the two.
set -eu
events=${1:-20000}
repeat=${2:-10}
runs=${RUNS:-3}
BUILD=${BUILD:-build}
if [ -d /dev/shm ]; then work=${WORK:-/dev/shm/narwhal-host-actors}; else work=${WORK:-build/host-actors}; fi
narwhal=$BUILD/bin/narwhal
mkdir -p "$work/in" "$work/psa" "$work/chain"

# the input: full_chain.xml's source, EVENTS events, then the PSA's output of it (once)
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/in/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/in/ADFWriter.conf"
"$narwhal" run topologies/simulate.xml --actors "$BUILD/actors" --conf "$work/in:topologies/conf" > "$work/simulate.log" 2>&1
printf 'File %s\n' "$work/input.adf" > "$work/psa/ADFReader.conf"
printf 'File %s\n' "$work/psa.adf" > "$work/psa/ADFWriter.conf"
sed 's/4000000/16000000/' topologies/psa.xml > "$work/psa.xml"
"$narwhal" run "$work/psa.xml" --actors "$BUILD/actors" --conf "$work/psa:topologies/conf" > "$work/psa.log" 2>&1

# the host chain: replay_chain.xml without its PSA, the PSA's output read REPEAT times
awk '/<intermediary/ { held = $0 "\n"; holding = 1; next }
     holding { held = held $0 "\n"; if ($0 ~ /<\/intermediary>/) { holding = 0; if (held !~ /<name>psa<\/name>/) printf "%s", held }; next }
     { print }' topologies/replay_chain.xml \
    > "$work/host.xml"
sed -i 's|<data_source source_buffer="hits">psa</data_source>|<data_source source_buffer="crystals">reader</data_source>|' "$work/host.xml"
printf 'File %s\nRepeat %s\n' "$work/psa.adf" "$repeat" > "$work/chain/ADFReader.conf"
printf 'File %s\nKeys data:psa event:data:psa\nOtherFile beside\n' "$work/out.adf" > "$work/chain/ADFWriter.conf"
sed "s|build/replay_chain/histo|$work/histo|" topologies/conf/replay_chain/Histo.conf > "$work/chain/Histo.conf"
cp topologies/conf/replay_chain/Tracker.conf "$work/chain/"

# run TAG ACTORS: one run; its per-actor seconds appended to $work/TAG.times, its outputs' checksum to $work/TAG.sums
run() {
    "$narwhal" run "$work/host.xml" --actors "$2" --conf "$work/chain:topologies/conf" --report "$work/$1.tsv" \
        > "$work/$1.log" 2>&1
    awk -F'\t' '$1 == "actor" { print $2, $10 }' "$work/$1.tsv" >> "$work/$1.times"
    cat "$work/out.adf" "$work/out.narwhal.adf" "$work"/histo/*.csv | md5sum | cut -c1-32 >> "$work/$1.sums"
}
rm -f "$work"/*.times "$work"/*.sums
i=0
while [ "$i" -lt "$runs" ]; do
    run now "$BUILD/actors"
    [ -z "${BEFORE:-}" ] || run before "$BEFORE/build/actors"
    i=$((i + 1))
done

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads, load $(cut -d' ' -f1-3 /proc/loadavg); tree $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# $(grep -c . "$work/now.sums") runs; input: $(grep -h 'emitted' "$work/now.log" | head -n 1)"
grep -h 'ADFWriter\] run' "$work/now.log" | sed 's/^/# /'
{
    awk '{ if (!($1 in best) || $2 < best[$1]) best[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
         END { for (i = 1; i <= n; i++) print order[i], best[order[i]] }' "$work/now.times" > "$work/now.best"
    if [ -n "${BEFORE:-}" ]; then
        awk '{ if (!($1 in best) || $2 < best[$1]) best[$1] = $2 } END { for (a in best) print a, best[a] }' \
            "$work/before.times" > "$work/before.best"
        echo "| actor | s in process_block, this tree | before ($BEFORE) |"
        echo "|---|---:|---:|"
        awk 'NR == FNR { b[$1] = $2; next } { printf "| %s | %.3f | %.3f |\n", $1, $2, b[$1] }' "$work/before.best" "$work/now.best"
    else
        echo "| actor | s in process_block |"
        echo "|---|---:|"
        awk '{ printf "| %s | %.3f |\n", $1, $2 }' "$work/now.best"
    fi
}
if [ "$(sort -u "$work"/*.sums | wc -l)" -eq 1 ]; then
    echo "# every run's output files (ADF pair and histograms) byte-identical"
else
    echo "# output files DIFFER between runs or trees:"; sort "$work"/*.sums | uniq -c
fi
