#!/bin/sh
# h200-view.sh: issue 20's per-device view on a GPU machine: full-grid searches per second of the GPU against the same machine's CPU (all its cores), per watt where the power is measurable, and the H200s AGATA's 9 M crystal-events/s would need, from this run's measurements; the table on stdout.
#   sh sample_runs/bench/h200-view.sh [OUT]          (OUT: logs, a folder under the tree: build/h200-view by default)
#   EVENTS=N also runs the replay chain (throughput.sh, N generator events; PSAS, TRACKERS as there) under
#   bench-machine --energy (its watts: the whole script, the input's simulation included); without it
#   CHAIN_RATE=R (crystal-events/s per GPU measured elsewhere) may be given.
#   SEARCHES, CPU, LADDER, NAIVE: bench-psa's --searches (GPU, 262144), --cpu (all-core CPU rows, 16384),
#   --ladder (2048) and --naive (400).
# Power: the GPU's from NVML's energy counter over each bench-psa row (bench_limits.h), the CPU packages'
# from RAPL when readable; nvidia-smi's power.draw sampled every 200 ms beside it as a cross-check (the
# whole bench-psa run: idle, CPU rows and GPU rows together).  What cannot be read says "not measured".
set -eu
BUILD=${BUILD:-build}
out=${1:-build/h200-view}
mkdir -p "$out"
make --no-print-directory BUILD="$BUILD" -j"$(nproc)" all > "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n), tree $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load $(cut -d' ' -f1-3 /proc/loadavg)"
    lscpu | grep -E 'Model name|^CPU\(s\)' | sed 's/^/# /'
    "$BUILD/bin/bench-machine"
} | tee "$out/machine.txt"

smi=
if command -v nvidia-smi > /dev/null 2>&1; then
    nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader | sed 's/^/# GPU: /'
    nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits -lms 200 > "$out/power-draw.csv" 2>/dev/null &
    smi=$!
    sleep 2 # idle samples first
fi
"$BUILD/bin/bench-psa" --searches "${SEARCHES:-262144}" --cpu "${CPU:-16384}" --ladder "${LADDER:-2048}" \
    --naive "${NAIVE:-400}" --gpu-prune > "$out/bench-psa.log" 2>&1 ||
    { tail -n 20 "$out/bench-psa.log"; [ -z "$smi" ] || kill "$smi"; exit 1; }
[ -z "$smi" ] || kill "$smi"

chain=${CHAIN_RATE:-}
chain_how="given as CHAIN_RATE"
if [ -n "${EVENTS:-}" ]; then
    "$BUILD/bin/bench-machine" --energy -- env BUILD="$BUILD" sh sample_runs/full_chain/throughput.sh ../../"$out"/chain "$EVENTS" \
        > "$out/chain.txt" 2> "$out/chain-energy.txt"
    chain=$(awk -F'|' '/^\| (sequential|pipelined)/ { r = $5 + 0; if (r > best) best = r } END { print best + 0 }' "$out/chain.txt")
    chain_how="the replay chain's best row, $EVENTS events ($(cat "$out/chain-energy.txt"))"
fi
searches_per_event=$(grep -ho '[0-9]* data:crystal frames.* [0-9]* searches on the' "$out"/chain/throughput-1.log 2>/dev/null |
    awk '{ f = $1; for (i = 1; i <= NF; i++) if ($(i + 1) == "searches") s = $i } END { if (f) printf "%.3f", s / f }')

awk -v chain="${chain:-0}" -v chain_how="$chain_how" -v spe="${searches_per_event:-2.8}" \
    -v spe_how="${searches_per_event:+the chain log}" -v draw="$out/power-draw.csv" '
    # the table: | path | data | search | searches/s | ...
    /^\| / && $0 !~ /^\| path/ {
        split($0, f, "|")
        for (i = 2; i <= 5; i++) gsub(/^ +| +$/, "", f[i])
        rate[f[2] "|" f[3] "|" f[4]] = f[5] + 0
    }
    /^bench-psa: the CPU baseline/ { sub(/^bench-psa: the CPU baseline \(x best CPU\): /, ""); best_cpu = $0 }
    /^bench-psa: power: / {
        line = $0; sub(/^bench-psa: power: /, "", line)
        split(line, p, ": GPU "); key = p[1]
        gw[key] = (p[2] ~ /^[0-9]/) ? p[2] + 0 : -1
        cw[key] = (match(line, /CPU packages [0-9]+ W/)) ? substr(line, RSTART + 13) + 0 : -1
    }
    /^bench-psa: limits: GPU: / { gpu = $0; sub(/^bench-psa: limits: GPU: /, "", gpu); sub(/,.*/, "", gpu) }
    /^bench-psa: limits: CPU: / { threads = $4 }
    function ceil(x) { return x == int(x) ? x : int(x) + 1 }
    function watts(a, k) { return (k in a) && a[k] >= 0 ? sprintf("%.0f", a[k]) : "not measured" }
    function per_j(r, a, k) { return (k in a) && a[k] > 0 ? sprintf("%.4g", r / a[k]) : "-" }
    END {
        while ((getline s < draw) > 0) { s += 0; if (s > 0) { ns++; sum += s; if (s > mx) mx = s } }
        g = rate["GPU|float|full"]; gp = rate["GPU pruned, 3-bit bound|float|full"]
        cpu = "CPU, " threads " threads"; c = rate[cpu "|float|full"]
        split(best_cpu, b, ", float"); bc = rate[b[1] "|float|full"]
        printf "| device | full-grid searches/s (float) | watts during it | searches per joule |\n|---|---:|---:|---:|\n"
        if (g > 0)
            printf "| %s, exhaustive | %.0f | %s (GPU board) | %s |\n", gpu, g, watts(gw, "GPU float full"),
                   per_j(g, gw, "GPU float full")
        else
            printf "| GPU | none usable | | |\n"
        k = "GPU pruned, 3-bit bound float full"
        if (gp > 0)
            printf "| %s, pruned (3-bit bound, the same answers) | %.0f | %s (GPU board) | %s |\n", gpu, gp, watts(gw, k),
                   per_j(gp, gw, k)
        printf "| CPU, %d threads (bench-psa'"'"'s CPU row) | %.0f | %s (CPU packages) | %s |\n", threads, c,
               watts(cw, cpu " float full"), per_j(c, cw, cpu " float full")
        if (bc > 0 && b[1] != cpu)
            printf "| CPU, its best full search: %s | %.0f | %s (CPU packages) | %s |\n", b[1], bc,
                   watts(cw, b[1] " float full"), per_j(bc, cw, b[1] " float full")
        best_c = bc > c ? bc : c
        if (best_c > 0 && g > 0)
            printf "\nper device: the GPU %.1fx the CPU'"'"'s best full search (%s) exhaustive, %.1fx pruned\n", g / best_c,
                   (bc > c ? b[1] : cpu), (gp > 0 ? gp : g) / best_c
        kg = gp > 0 ? "GPU pruned, 3-bit bound float full" : "GPU float full"
        kc = (bc > c ? b[1] : cpu) " float full"
        if ((kg in gw) && gw[kg] > 0 && (kc in cw) && cw[kc] > 0)
            printf "per joule: the GPU board %.1fx the CPU packages (%s against %s)\n",
                   (gp > 0 ? gp : g) / gw[kg] / (best_c / cw[kc]), kg, kc
        else
            printf "per joule: not compared (the GPU'"'"'s or the CPU packages'"'"' power not measured)\n"
        if (ns > 0)
            printf "nvidia-smi power.draw over the whole bench-psa run: mean %.0f W, max %.0f W (%d samples)\n", sum / ns, mx, ns
        else
            printf "nvidia-smi power.draw: not measured (no nvidia-smi or no samples)\n"
        printf "\nAGATA, 180 crystals x 50 kHz = 9,000,000 crystal-events/s; %.2f searches per crystal-event (%s)\n", spe,
               spe_how != "" ? spe_how : "issue 20'"'"'s chain, not measured here"
        sg = (gp > g ? gp : g) / spe
        printf "| bound | crystal-events/s per GPU | GPUs for AGATA |\n|---|---:|---:|\n"
        if (sg > 0)
            printf "| the search alone (%s searches/s) | %.0f | %d |\n", (gp > g ? "pruned" : "exhaustive"), sg, ceil(9e6 / sg)
        if (chain > 0)
            printf "| the whole chain (%s) | %.0f | %d |\n", chain_how, chain, ceil(9e6 / chain)
        else
            printf "| the whole chain | not measured (EVENTS=N or CHAIN_RATE=R) | |\n"
    }' "$out/bench-psa.log" | tee "$out/view.txt"
grep -E '^bench-psa: (ratio|power): (GPU|CPU, )' "$out/bench-psa.log" | tee -a "$out/view.txt"
