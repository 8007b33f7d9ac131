#!/bin/sh
# throughput.sh: crystal-events per second through psa -> builder -> tracker -> histo, fed from a file (topologies/replay_chain.xml), sequential and pipelined.
#   sh sample_runs/full_chain/throughput.sh LABEL [EVENTS]    (EVENTS: generator events in the input file, 100000)
# The input holds full_chain.xml's source (Generator.conf of conf/full_chain) with EVENTS events,
# written once by topologies/simulate.xml.  Results: sample_runs/full_chain/LABEL/throughput.txt.
set -eu
label=${1:?usage: throughput.sh LABEL [EVENTS]}
events=${2:-100000}
BUILD=${BUILD:-build}
keep=sample_runs/full_chain/$label
work=build/replay_chain
mkdir -p "$keep" "$work/input-conf"
narwhal="$BUILD/bin/narwhal"

sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/input-conf/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/input-conf/ADFWriter.conf"
"$narwhal" run topologies/simulate.xml --actors "$BUILD/actors" --conf "$work/input-conf:topologies/conf" \
    > "$keep/throughput-input.log" 2>&1

# one replay: its log and report; prints the table row
replay() {
    mode=$1
    shift
    "$narwhal" run topologies/replay_chain.xml --actors "$BUILD/actors" --report "$work/report-$mode.tsv" "$@" \
        > "$keep/throughput-$mode.log" 2>&1
    awk -F'\t' -v mode="$mode" '
        $1 == "run" { block = $5 }
        $1 == "kind" && $2 == "reader" && $4 == "data:crystal" { crystals = $5 }
        $1 == "actor" { name[++n] = $2; busy[n] = $10 }
        END {
            slow = 1
            for (i = 2; i < n; i++) if (busy[i] > busy[slow] || slow == 1) slow = i
            line = sprintf("| %s | %d | %.2f | %.0f |", mode, crystals, block, crystals / block)
            for (i = 2; i < n; i++) line = line sprintf(" %.2f |", busy[i])
            print line sprintf(" %s |", name[slow])
        }' "$work/report-$mode.tsv"
}

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads; $events generator events in $work/input.adf ($(du -h "$work/input.adf" | cut -f1))"
    echo "# load average before the runs: $(cut -d" " -f1-3 /proc/loadavg)"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
    fi
    echo "| mode | crystal-events | seconds | crystal-events/s | psa s | builder s | tracker s | histo s | busiest |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
    replay sequential
    replay pipelined --pipeline
    grep -h -E '^\[(PSA|Tracker|Histo)\] (searching|tracking|counting) on' "$keep/throughput-sequential.log"
} > "$keep/throughput.txt"
cat "$keep/throughput.txt"
