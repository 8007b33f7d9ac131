#!/bin/sh
# run.sh: the 45-crystal topology with GPU auto on 1, 2 and 4 GPUs of one node (CUDA_VISIBLE_DEVICES) and under MPI with one rank per GPU: crystal-events/s, the GPU each actor used, every output compared with the one-GPU run's (issue 21).
#   [EVENTS=N] [GEN_EVENTS=N] [BASIS=FILE] [COUNTS="1 2 4"] [BUILD=DIR] [SKIP_BUILD=1] [OMPI_TREE=DIR]
#       sh sample_runs/multigpu/run.sh LABEL [ROW...]
# ROW (default: every row this machine allows, the 1-GPU ones first):
#   replay-N  agata45 replayed: an adf_reader per crystal (adf-split's files of one recorded
#             stream of EVENTS events, default 1,600,000: about 400,000 crystal-events, 3.2 GB),
#             a PSA per crystal, the builder merging the 45 streams, tracker, histo, writer;
#             pipelined, --strict, on the first N GPUs.  What the GPUs scale, without the
#             generators' cost.
#   gen-N     agata45 as make-agata.sh writes it (45 generators, each simulating all GEN_EVENTS
#             events, default 50,000: the 12,022 crystal-events of sample_runs/full_chain/h200-graph).
#   mpi-N     replay under mpirun -np N (N ranks on this node, all N GPUs visible): GPU auto puts
#             local rank r's actors on GPU r (actors/kit/kit.h); readers dealt to the ranks, each PSA
#             with its reader, builder..writer on rank 0 (README: Running across hosts).
# N from COUNTS (default 1 2 4, those up to the GPUs nvidia-smi lists).  Every actor of the GPU
# kinds has GPU auto (PSA.conf, Tracker.conf, Histo.conf of the work folder).  Each row's output
# (the writer's file, histo's spectra) is compared byte for byte (cmp) with the 1-GPU row of its
# topology (replay-1 for replay and mpi rows) made by this or an earlier call in the same work
# folder, build/multigpu-bench/.  Several calls append to one LABEL: `run.sh L replay-1 replay-2`,
# then `run.sh L replay-4 mpi-2 mpi-4` (each row's initialise takes about a minute with the default
# basis: 45 PSAs load 0.7 GB each).  Crystal-events/s: the producers' narwhal:crystal frames over
# the time the blocks ran (initialise excluded).
# Results: sample_runs/multigpu/LABEL/results.md, each row's log and report.
set -eu
label=${1:?usage: run.sh LABEL [ROW...]}
shift
BUILD=${BUILD:-build}
keep=sample_runs/multigpu/$label
work=build/multigpu-bench
narwhal=$BUILD/bin/narwhal
mkdir -p "$keep" "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${OMPI_TREE:-}" ]; then
    . "$OMPI_TREE/env.sh"
fi
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
counts=${COUNTS:-1 2 4}

if [ -z "${SKIP_BUILD:-}" ]; then
    make --no-print-directory BUILD="$BUILD" -j"$(nproc)" all > "$work/make.log" 2>&1 || { tail -n 20 "$work/make.log"; exit 1; }
    [ -n "${BASIS:-}" ] || make --no-print-directory BUILD="$BUILD" basis >> "$work/make.log" 2>&1
fi

# ---- the topologies and their files, once per work folder
if [ ! -f "$work/ready" ]; then
    rm -rf "$work/conf" "$work/split" "$work/shared"
    mkdir -p "$work/shared" "$work/conf/record/generator"
    topologies/make-agata.sh --crystals 45 --events "${GEN_EVENTS:-50000}" --dir "$work" > /dev/null
    gen=$work/conf/agata45
    sed -e 's/^GPU .*/GPU         auto/' topologies/conf/PSA.conf > "$work/shared/PSA.conf"
    grep -q '^GPU .*auto' "$work/shared/PSA.conf" || echo 'GPU auto' >> "$work/shared/PSA.conf"
    if [ -n "${BASIS:-}" ]; then
        for f in "$gen"/gen*/Generator.conf; do sed -i "s|^Basis .*|Basis      $BASIS|" "$f"; done
        sed -i "s|^Basis .*|Basis       $BASIS|" "$work/shared/PSA.conf"
    fi
    for f in Tracker Histo; do sed -i -e '/^GPU[[:space:]]/d' -e '$a GPU        auto' "$gen/$f.conf"; done
    sed -i -e '/^Plot[[:space:]]/d' -e '$a Plot       none' "$gen/Histo.conf"
    # the replayed topology: each generator replaced by an adf_reader of its crystal's file
    sed -e 's|<library>generator.so</library>|<library>adf_reader.so</library>|' -e 's|agata45|replay45|g' \
        "$work/agata45.xml" > "$work/replay45.xml"
    mkdir -p "$work/conf/replay45"
    cp "$gen/Builder.conf" "$gen/Tracker.conf" "$gen/Histo.conf" "$work/conf/replay45/"
    # one stream of every crystal, recorded once, split per crystal
    first=$(ls -d "$gen"/gen* | head -n 1)
    sed -e 's/^Crystals .*/Crystals   all/' -e 's/^SyncEvery .*/SyncEvery  0/' -e 's/^Output .*/Output     crystal/' \
        -e "s/^Events .*/Events     ${EVENTS:-1600000}/" "$first/Generator.conf" > "$work/conf/record/generator/Generator.conf"
    printf 'File %s\n' "$work/recorded.adf" > "$work/conf/record/ADFWriter.conf"
    "$narwhal" run topologies/simulate.xml --pipeline --actors "$BUILD/actors" --conf "$work/conf/record" \
        > "$work/record.log" 2>&1 || { tail -n 20 "$work/record.log"; exit 1; }
    mkdir -p "$work/split"
    "$BUILD/bin/adf-split" "$work/recorded.adf" "$work/split" > "$work/split.log" 2>&1 || { cat "$work/split.log"; exit 1; }
    rm -f "$work/recorded.adf"
    for f in "$work"/split/crystal-*.adf; do
        id=$(basename "$f" .adf | sed 's/^crystal-//')
        mkdir -p "$work/conf/replay45/gen$id"
        printf 'File %s\n' "$f" > "$work/conf/replay45/gen$id/ADFReader.conf"
    done
    touch "$work/ready"
fi

# rate ROW: crystal-events/s of a row already run, from its report ("" when it has not run)
rate() {
    [ -f "$work/row/$1/report.tsv" ] || return 0
    awk -F'\t' '$1 == "run" { block = $5 } $1 == "kind" && $4 == "narwhal:crystal" && $2 ~ /^gen/ { n += $5 }
        END { if (block > 0) printf "%.0f", n / block }' "$work/row/$1/report.tsv"
}

# same ROW REFERENCE: whether ROW's outputs equal REFERENCE's, in words
same() {
    if [ "$1" = "$2" ]; then
        echo "reference"
    elif [ ! -f "$work/row/$2/output.adf" ]; then
        echo "no $2 to compare with"
    elif cmp -s "$work/row/$1/output.adf" "$work/row/$2/output.adf" && diff -r -q "$work/row/$1/histo" "$work/row/$2/histo" > /dev/null; then
        echo "identical to $2"
    else
        echo "DIFFERS from $2"
    fi
}

# row ROW: runs it, prints its table row
row() {
    name=$1 topology=replay45 n=${1#*-} ranks=1 reference=replay-1
    case $name in
    gen-*) topology=agata45 reference=gen-1 ;;
    mpi-*) ranks=$n ;;
    esac
    if [ "$gpus" -gt 0 ] && [ "$n" -gt "$gpus" ]; then
        echo "| $name | $n | $ranks | not run: this machine has $gpus GPU(s) | | | | | | | |"
        return
    fi
    dir=$work/row/$name
    rm -rf "$dir"
    mkdir -p "$dir"
    printf 'File %s\n' "$dir/output.adf" > "$dir/ADFWriter.conf"
    sed "s|^OutputDir .*|OutputDir  $dir/histo|" "$work/conf/$topology/Histo.conf" > "$dir/Histo.conf"
    visible=$(seq -s, 0 $((n - 1)))
    set -- "$narwhal" run "$work/$topology.xml" --strict --actors "$BUILD/actors" \
        --conf "$dir:$work/conf/$topology:$work/shared:topologies/conf" --report "$dir/report.tsv"
    if [ "$ranks" -gt 1 ]; then
        command -v mpirun > /dev/null || { echo "| $name | $n | $ranks | not run: no mpirun (OMPI_TREE=DIR) | | | | | | | |"; return; }
        set -- mpirun -np "$ranks" --oversubscribe "$@"
    else
        set -- "$@" --pipeline
    fi
    if ! CUDA_VISIBLE_DEVICES=$visible "$@" > "$keep/$name.log" 2>&1; then
        echo "| $name | $n | $ranks | FAILED: $keep/$name.log | | | | | | | |"
        return
    fi
    cp "$dir/report.tsv" "$keep/$name.tsv"
    one=$(rate "$reference")
    awk -F'\t' -v row="$name" -v n="$n" -v ranks="$ranks" -v one="$one" -v same="$(same "$name" "$reference")" '
        $1 == "run" { block = $5 }
        $1 == "kind" && $4 == "narwhal:crystal" && $2 ~ /^gen/ { crystals += $5 }
        $1 == "actor" {
            busy[$2] = $10
            if ($10 > top_s) { top = $2; top_s = $10 }
            if ($2 ~ /^psa/) { psa += $10; on[$13]++ }
            if ($2 == "tracker" || $2 == "histo") where = where sprintf("; %s %s", $2, $13)
        }
        END {
            for (d in on) spread = spread sprintf("%s%d PSAs %s", spread == "" ? "" : "; ", on[d], d)
            r = crystals / block
            printf "| %s | %d | %d | %d | %.2f | %.0f | %s | %.2f | %.2f | %.2f | %s %.2f | %s%s | %s |\n", row, n, ranks,
                crystals, block, r, (one > 0 ? sprintf("%.2f", r / one) : "-"), psa, busy["builder"], busy["tracker"],
                top, top_s, spread, where, same
        }' "$dir/report.tsv"
}

if [ $# -eq 0 ]; then
    for n in $counts; do set -- "$@" "replay-$n"; done
    for n in $counts; do set -- "$@" "gen-$n"; done
    for n in $counts; do [ "$n" -gt 1 ] && set -- "$@" "mpi-$n"; done
fi
{
    echo
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads, load $(cut -d' ' -f1-3 /proc/loadavg);" \
        "$gpus GPU(s); tree $(git rev-parse --short HEAD 2> /dev/null || echo '?'); rows: $*"
    nvidia-smi --query-gpu=index,name,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader 2> /dev/null | sed 's/^/# GPU /' || true
    echo "| row | GPUs | ranks | crystal-events | s | crystal-events/s | vs 1 GPU | PSA s (sum) | builder s | tracker s | busiest, s | where (process_device) | output |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
    for r in "$@"; do
        row "$r"
    done
    echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$keep/results.md"
