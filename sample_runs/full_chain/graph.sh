#!/bin/sh
# graph.sh: crystal-events/s of the 45-crystal topology (a generator and a PSA per crystal, the builder merging 45 streams) against the single-stream chain on the same events, sequential and pipelined.
#   [EVENTS=N] [BASIS=FILE] sh sample_runs/full_chain/graph.sh LABEL
# The topology is agata45.xml as topologies/make-agata.sh writes it (EVENTS events, default
# 20,000, of 661/1173/1332 keV lines, isotropic, Seed 1, the 45 crystals of
# detector/arrays/agata45.txt), written into build/graph-bench/: each of 45 producers simulates
# every event and emits its own crystal's frames.  The single stream is topologies/full_chain.xml
# with one generator of the same settings emitting every crystal.  BASIS replaces the default
# basis for generators and PSAs (every one of the 90 loads it: 45 x 2 x 0.7 GB with the default,
# too much for a small machine; a coarse basis changes the PSA's cost).
# Crystal-events/s = data:crystal frames the producers emitted / the time the blocks ran.
# Results: sample_runs/full_chain/LABEL/graph.txt, each run's log and report.
set -eu
label=${1:?usage: graph.sh LABEL}
BUILD=${BUILD:-build}
keep=sample_runs/full_chain/$label
work=build/graph-bench
narwhal="$BUILD/bin/narwhal"
rm -rf "$work"
mkdir -p "$keep" "$work/single" "$work/shared" build/agata45
topologies/make-agata.sh --crystals 45 --events "${EVENTS:-20000}" --dir "$work" > /dev/null
conf=$work/conf/agata45
cp topologies/conf/PSA.conf "$work/shared/PSA.conf"
if [ -n "${BASIS:-}" ]; then
    for f in "$conf"/gen*/Generator.conf; do sed -i "s|^Basis .*|Basis      $BASIS|" "$f"; done
    sed -i "s|^Basis .*|Basis       $BASIS|" "$work/shared/PSA.conf"
fi
gen=$(ls -d "$conf"/gen* | head -n 1)
sed -e 's/^Crystals .*/Crystals   all/' -e 's/^SyncEvery .*/SyncEvery  0/' "$gen/Generator.conf" > "$work/single/Generator.conf"
printf 'File %s\n' "$work/single-output.adf" > "$work/single/ADFWriter.conf"
sed -e "s|^OutputDir .*|OutputDir  $work/single-histo|" "$conf/Histo.conf" > "$work/single/Histo.conf"
cp topologies/conf/Builder.conf "$work/single/Builder.conf"
rows=0

# run NAME TOPOLOGY [narwhal run options]: one run; prints its table row
run() {
    name=$1 topology=$2
    shift 2
    rows=$((rows + 1))
    "$narwhal" run "$topology" --actors "$BUILD/actors" --report "$work/report-$rows.tsv" "$@" \
        > "$keep/graph-$rows.log" 2>&1
    cp "$work/report-$rows.tsv" "$keep/report-$rows.tsv"
    awk -F'\t' -v mode="$name" '
        $1 == "run" { block = $5 }
        $1 == "kind" && $4 == "data:crystal" && ($2 ~ /^gen/ || $2 == "generator") { crystals += $5 }
        $1 == "actor" { name[++n] = $2; busy[n] = $10 }
        END {
            top = 1
            for (i = 2; i <= n; i++) if (busy[i] > busy[top]) top = i
            psa = 0; gens = 0
            for (i = 1; i <= n; i++) {
                if (name[i] ~ /^psa/) psa += busy[i]
                if (name[i] ~ /^gen/ || name[i] == "generator") gens += busy[i]
                if (name[i] == "builder") b = busy[i]
                if (name[i] == "tracker") t = busy[i]
            }
            printf "| %s | %d | %d | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f | %s %.2f |\n", mode, n, crystals, block,
                crystals / block, gens, psa, b, t, name[top], busy[top]
        }' "$work/report-$rows.tsv"
}

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
    fi
    echo "| topology, mode | actors | crystal-events | s | crystal-events/s | generators s | PSA s (sum) | builder s | tracker s | busiest actor, s |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    run "agata45, sequential" "$work/agata45.xml" --strict --conf "$conf:$work/shared:topologies/conf"
    run "agata45, pipelined" "$work/agata45.xml" --strict --pipeline --conf "$conf:$work/shared:topologies/conf"
    run "single stream, sequential" topologies/full_chain.xml --strict --conf "$work/single:$conf:$work/shared:topologies/conf"
    run "single stream, pipelined" topologies/full_chain.xml --strict --pipeline --conf "$work/single:$conf:$work/shared:topologies/conf"
    echo "# seconds: the time blocks ran; per actor: seconds in process_block (generators and PSAs summed over their instances)"
} > "$keep/graph.txt"
cat "$keep/graph.txt"
