#!/bin/sh
# ladder.sh: the thesis's speed ladder like for like on one machine (issue 22): bench-psa's ladder three times, then the PSA in the emulator (generator -> psa -> adf_writer, a 60Co source, no start-time refinement: one search per net-charge segment) with the thesis's CPU algorithm and ours, int16 and float, one thread and all; results under sample_runs/psa/LABEL/.
#   sh sample_runs/psa/ladder.sh LABEL [EVENTS] [LADDER_SEARCHES] [BENCH OPTIONS...]
#   EVENTS: generator events per chain run (2000); LADDER_SEARCHES: bench-psa --ladder (2048)
set -eu
label=${1:?usage: ladder.sh LABEL [EVENTS] [LADDER_SEARCHES] [BENCH OPTIONS...]}
events=${2:-2000}
ladder=${3:-2048}
[ $# -gt 3 ] && shift 3 || set --
BUILD=${BUILD:-build}
work=$BUILD/psa-ladder/$label
keep=sample_runs/psa/$label
rm -rf "$work" "$keep"
mkdir -p "$work/conf" "$keep"
[ -f build/cache/default.basis ] || make --no-print-directory basis
cores=$(nproc)
{ echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $cores cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"; } > "$keep/machine.txt"
for run in 1 2 3; do
    "$BUILD/bin/bench-psa" --cpu 2048 --searches 2048 --naive 50 --ladder "$ladder" "$@" > "$keep/bench-$run.log" 2>&1
done
# the chain: the generator feeds psa directly (as run.sh)
sed -e 's|<library>adf_reader.so</library>|<library>generator.so</library>|' \
    -e 's|<name>reader</name>|<name>generator</name>|' \
    -e 's|source_buffer="data1">reader<|source_buffer="data1">generator<|' \
    topologies/psa.xml > "$work/simulate_psa.xml"
sed -e "s|^Events .*|Events     $events|" -e "s|^Lines .*|Lines      1173.228 1 1332.492 1|" \
    topologies/conf/Generator.conf > "$work/conf/Generator.conf"
printf 'File %s\n' "$work/output.adf" > "$work/conf/ADFWriter.conf"
echo "| PSA kernel | data | threads | crystal-events | net-charge segments (searches) | per crystal-event | process_block, s | crystal-events/s | search, s | searches/s |" > "$keep/chain.md"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" >> "$keep/chain.md"
for kernel in thesis auto; do
    for data in int16 float; do
        for threads in 1 "$cores"; do
            sed -e "s|^Device .*|Device     cpu|" -e "s|^ShiftRange .*|ShiftRange 0|" \
                -e "s|^CPUKernel .*|CPUKernel  $kernel|" -e "s|^Data .*|Data       $data|" \
                -e "s|^Threads .*|Threads    $threads|" topologies/conf/PSA.conf > "$work/conf/PSA.conf"
            log="$keep/chain-$kernel-$data-$threads.log"
            "$BUILD/bin/narwhal" run "$work/simulate_psa.xml" --actors "$BUILD/actors" --conf "$work/conf" > "$log" 2>&1
            awk -v k="$kernel" -v d="$data" -v t="$threads" '
                /\[PSA\] [0-9]+ data:crystal frames/ {
                    crystals = $2
                    for (i = 1; i <= NF; i++) if ($i == "searches" && $(i + 1) == "on") s = $(i - 1) }
                /\[PSA\] time in process_block/ { pb = $5; for (i = 1; i <= NF; i++) if ($i == "search") st = $(i + 1) + 0 }
                END { printf "| %s | %s | %s | %d | %d | %.2f | %.3f | %.0f | %.3f | %.0f |\n", k, d, t, crystals, s,
                      s / crystals, pb, crystals / pb, st, s / st }' "$log" >> "$keep/chain.md"
        done
    done
done
cat "$keep/chain.md"
