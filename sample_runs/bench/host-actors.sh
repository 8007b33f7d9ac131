#!/bin/sh
# host-actors.sh: the host-side actors' cost in sequential mode, without the PSA's: the PSA's output of a replay input made once, then read back through reader -> builder -> tracker -> histo -> writer, RUNS times, each actor's seconds in process_block (the least of the runs: the machine's noise is one-sided) and the outputs' checksums; then the replay input's traces (the replay chain's reader's work) read by a reader alone; with BEFORE=DIR the same with another tree's actors, alternating, on the same input.
#   sh sample_runs/bench/host-actors.sh [EVENTS] [REPEAT]     (EVENTS: generator events, 20000; REPEAT: passes over the PSA's output, 10)
#   RUNS=N (3), BUILD (build), BEFORE=DIR (a tree built in DIR/build), WORK (/dev/shm/narwhal-host-actors when /dev/shm exists)
#   TRACE_REPEAT=N passes over the traces (REPEAT); THREADS="8 16": rows of this tree's reader with ADFReader's Threads N
#   BLOCK=BYTES the chain's reader blocks (452000: what the PSA emits for a 16 MB block of traces in the
#   replay chain, 426 MB in 942 blocks on the H200, so that the actors see the replay chain's blocks)
# The PSA runs once, on its default device; the tracker and histo on theirs.  The report prints
# "| actor | s (this tree) | s (before) |" (the emulator's own: its blocks' time less the actors'), and whether
# every output file is byte-identical between the runs and trees.
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
sed -i -e 's|<data_source source_buffer="hits">psa</data_source>|<data_source source_buffer="crystals">reader</data_source>|' \
    -e "s|<size output_buffer=\"crystals\">16000000<|<size output_buffer=\"crystals\">${BLOCK:-452000}<|" "$work/host.xml"
printf 'File %s\nRepeat %s\n' "$work/psa.adf" "$repeat" > "$work/chain/ADFReader.conf"
printf 'File %s\nKeys data:psa event:data:psa\nOtherFile beside\n' "$work/out.adf" > "$work/chain/ADFWriter.conf"
sed "s|build/replay_chain/histo|$work/histo|" topologies/conf/replay_chain/Histo.conf > "$work/chain/Histo.conf"
cp topologies/conf/replay_chain/Tracker.conf "$work/chain/"

# the traces: the replay chain's reader (16 MB blocks) to a writer that keeps only the meta:eof
mkdir -p "$work/traces"
sed 's/1000000/16000000/' topologies/replay.xml > "$work/traces.xml"
printf 'File %s\nRepeat %s\n' "$work/input.adf" "${TRACE_REPEAT:-$repeat}" > "$work/traces/ADFReader.conf"
printf 'File %s\nKeys meta:eof\n' "$work/traces.adf" > "$work/traces/ADFWriter.conf"
for t in ${THREADS:-}; do
    mkdir -p "$work/traces-t$t"
    cp "$work/traces/ADFWriter.conf" "$work/traces-t$t/"
    { cat "$work/traces/ADFReader.conf"; echo "Threads $t"; } > "$work/traces-t$t/ADFReader.conf"
done

# traces TAG NARWHAL ACTORS CONF NAME: one reader run on the traces, its reader's and the emulator's seconds
# as NAME rows (the writer is this tree's: before 40615e2 a first block with nothing for File failed)
traces() {
    rm -rf "$work/actors-$1"
    mkdir -p "$work/actors-$1"
    ln -s "$(realpath "$3/adf_reader.so")" "$work/actors-$1/"
    ln -s "$(realpath "$BUILD/actors/adf_writer.so")" "$work/actors-$1/"
    "$2" run "$work/traces.xml" --actors "$work/actors-$1" --conf "$4:topologies/conf" --report "$work/$1-traces.tsv" \
        > "$work/$1-traces.log" 2>&1
    awk -F'\t' -v name="$5" '$1 == "run" { blocks = $5 } $1 == "actor" { actors += $10; if ($2 == "reader") r = $10 }
                             END { print "reader(" name ")", r; print "emulator(" name ")", blocks - actors }' \
        "$work/$1-traces.tsv" >> "$work/$1.times"
}

# run TAG NARWHAL ACTORS: one run of a tree's narwhal and actors, the chain then the traces; the per-actor
# seconds (and the emulator's own: the blocks' time less the actors') appended to $work/TAG.times, the
# outputs' checksum to $work/TAG.sums
run() {
    "$2" run "$work/host.xml" --actors "$3" --conf "$work/chain:topologies/conf" --report "$work/$1.tsv" \
        > "$work/$1.log" 2>&1
    awk -F'\t' '$1 == "run" { blocks = $5 } $1 == "actor" { print $2, $10; actors += $10 }
                 END { print "emulator", blocks - actors }' "$work/$1.tsv" >> "$work/$1.times"
    traces "$1" "$2" "$3" "$work/traces" traces
    cat "$work/out.adf" "$work/out.narwhal.adf" "$work"/histo/*.csv "$work/traces.adf" | md5sum | cut -c1-32 \
        >> "$work/$1.sums"
}
rm -f "$work"/*.times "$work"/*.sums
i=0
while [ "$i" -lt "$runs" ]; do
    run now "$narwhal" "$BUILD/actors"
    for t in ${THREADS:-}; do traces now "$narwhal" "$BUILD/actors" "$work/traces-t$t" "traces,Threads=$t"; done
    [ -z "${BEFORE:-}" ] || run before "$BEFORE/build/bin/narwhal" "$BEFORE/build/actors"
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
        awk 'NR == FNR { b[$1] = $2; next } { printf "| %s | %.3f | %s |\n", $1, $2, $1 in b ? sprintf("%.3f", b[$1]) : "-" }' "$work/before.best" "$work/now.best"
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
