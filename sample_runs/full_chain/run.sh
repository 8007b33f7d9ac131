#!/bin/sh
# run.sh: records a run of topologies/full_chain.xml (make run-regular's chain) under sample_runs/full_chain/LABEL/: command, log, summary, table, plots.
#   sh sample_runs/full_chain/run.sh LABEL [narwhal run options, e.g. --pipeline]
set -eu
label=${1:?usage: run.sh LABEL [narwhal run options]}
shift
BUILD=${BUILD:-build}
keep=sample_runs/full_chain/$label
out=build/full_chain
rm -rf "$keep" "$out"
mkdir -p "$keep" "$out"
cmd="$BUILD/bin/narwhal run topologies/full_chain.xml --actors $BUILD/actors --report $out/report.tsv $*"
sum="$BUILD/bin/narwhal summary $out/output.adf --report $out/report.tsv --plots $out/plots --histo $out/histo"
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
    fi
    echo "$cmd"
    echo "$sum"
} > "$keep/command.txt"
start=$(date +%s.%N)
status=0
$cmd > "$keep/run.log" 2>&1 || status=$?
$sum > "$keep/summary.txt" 2>&1 || status=$?
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "chain and summary: %.1f s of wall time\n", e - s }' >> "$keep/command.txt"
grep '^table' "$out/report.tsv" | cut -f2- > "$keep/table.txt"
cp "$out/report.tsv" "$keep/"
for f in spectra.png position.png spectra.csv resolution.csv residuals.csv spectra.gp position.gp; do
    if [ -e "$out/plots/$f" ]; then cp "$out/plots/$f" "$keep/"; fi
done
for f in gamma crystal hit; do
    if [ -e "$out/histo/$f.png" ]; then cp "$out/histo/$f.png" "$keep/histo-$f.png"; fi
done
cat "$keep/command.txt" "$keep/summary.txt"
exit $status
