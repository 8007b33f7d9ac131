#!/bin/sh
# run.sh: topologies across MPI ranks on one machine: a link's throughput (bench-mpi-link, and narwhal's own link against one process), the triple cluster and the 45-crystal topology at 1, 2 and 4 ranks, crystal-events/s.
#   [EVENTS=N] [BASIS=FILE] [OMPI_TREE=DIR] [BUILD=DIR] [SKIP_BUILD=1] sh sample_runs/mpi/run.sh LABEL
# EVENTS: events per run of every producer (default 400; each of the 45 producers simulates them all).
# BASIS: the PSAs' and generators' basis; default a coarse one (6 mm grid) built into the work
#   folder, since 45 PSAs per machine each load it (the default 2 mm basis is 0.7 GB each).
# OMPI_TREE: an Open MPI unpacked by sample_runs/mpi/ompi-tree.sh (a machine without one
#   installed); its env.sh is sourced before narwhal is built (make all build-tests, unless
#   SKIP_BUILD=1), so that it has MPI.
# 1 rank is the single-process run (--pipeline); N ranks are mpirun -np N on this host, the
# topology all on localhost, so spread (README.md: producers dealt to the ranks in turn, each PSA
# with its producer, the builder and what follows on rank 0); triple_mpi.xml is the 3-host
# split (producers, PSAs, builder..writer).  Crystal-events/s: the producers' narwhal:crystal
# frames over the time the blocks ran (rank 0's table: the longest rank).
# Results in sample_runs/mpi/LABEL/: results.md, each run's log and report.
set -eu
label=${1:?usage: run.sh LABEL}
BUILD=${BUILD:-build}
events=${EVENTS:-400}
keep=sample_runs/mpi/$label
work=build/mpi-bench
narwhal=$BUILD/bin/narwhal
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if [ -n "${OMPI_TREE:-}" ]; then
    . "$OMPI_TREE/env.sh"
fi
command -v mpirun > /dev/null || { echo "run.sh: no mpirun (OMPI_TREE=DIR: sample_runs/mpi/ompi-tree.sh)" >&2; exit 1; }
if [ -z "${SKIP_BUILD:-}" ]; then
    make --no-print-directory BUILD="$BUILD" -j"$(nproc)" all build-tests > "$work.make.log" 2>&1 ||
        { tail -n 20 "$work.make.log"; exit 1; }
fi
rm -rf "$work"
mkdir -p "$keep" "$work/shared"
basis=${BASIS:-$work/coarse.basis}
[ -n "${BASIS:-}" ] || "$BUILD/bin/basisgen" --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o "$basis"
for name in triple agata45; do
    if [ $name = triple ]; then
        topologies/make-agata.sh --array detector/arrays/triple.txt --name triple --events "$events" \
            --direction "-35 -25 -228" --dir "$work" > /dev/null
    else
        topologies/make-agata.sh --crystals 45 --events "$events" --dir "$work" > /dev/null
    fi
    for f in "$work/conf/$name"/gen*/Generator.conf; do sed -i "s|^Basis .*|Basis      $basis|" "$f"; done
    sed -i "s|^OutputDir .*|OutputDir  $work/$name-histo|" "$work/conf/$name/Histo.conf"
    sed -i "s|^File .*|File       $work/$name-output.adf|" "$work/conf/$name/ADFWriter.conf"
done
sed "s|^Basis .*|Basis       $basis|" topologies/conf/PSA.conf > "$work/shared/PSA.conf"

# the link alone: adf_reader (mkadf's traces, read Repeat times from the page cache) -> a consumer
# that only walks the frames, on two hosts: one process, or two ranks and a link between them
"$BUILD/tests/mkadf" "$work/link-input.adf" 2000 > /dev/null
printf 'File %s\nRepeat 40\n' "$work/link-input.adf" > "$work/shared/ADFReader.conf"
cat > "$work/link.xml" <<'XML'
<configuration>
  <producer><name>reader</name><hostname>a</hostname><library>adf_reader.so</library>
    <output_buffer_name>data</output_buffer_name><size output_buffer="data">4194304</size></producer>
  <consumer><name>sink</name><hostname>b</hostname><library>lifecycle_consumer.so</library>
    <data_source source_buffer="data">reader</data_source></consumer>
</configuration>
XML

rows=0
# run RANKS NAME TOPOLOGY [narwhal run options]: one run (RANKS 1: one process, pipelined); its row
run() {
    ranks=$1 name=$2 topology=$3
    shift 3
    rows=$((rows + 1))
    report=$work/report-$rows.tsv
    if [ "$ranks" = 1 ]; then
        set -- "$narwhal" run "$topology" --pipeline "$@"
    else
        set -- mpirun -np "$ranks" "$narwhal" run "$topology" "$@"
    fi
    "$@" --actors "$BUILD/actors" --actors "$BUILD/tests/actors" --report "$report" > "$keep/run-$rows.log" 2>&1 ||
        { echo "run.sh: $* failed:" >&2; tail -n 20 "$keep/run-$rows.log" >&2; exit 1; }
    cp "$report" "$keep/report-$rows.tsv"
    awk -F'\t' -v what="$name" -v ranks="$ranks" '
        $1 == "run" { block = $5 }
        $1 == "kind" && $4 == "narwhal:crystal" && $2 ~ /^gen/ { crystals += $5 }
        $1 == "actor" { bytes[$2] = $8; busy[$2] = $10; if (busy[$2] > top_s) { top = $2; top_s = busy[$2] } }
        END {
            if (crystals) printf "| %s | %d | %d | %.2f | %.0f | %s %.2f |\n", what, ranks, crystals, block,
                crystals / block, top, top_s
            else printf "| %s | %d | %.0f MB | %.2f | %.2f GB/s | %s %.2f |\n", what, ranks, bytes["reader"] / 1e6,
                block, bytes["reader"] / block / 1e9, top, top_s
        }' "$report"
}

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads, $(mpirun --version | head -n 1);" \
        "load before $(cut -d' ' -f1-3 /proc/loadavg); EVENTS=$events, basis $basis"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/# GPU (ranks share it): /'
    fi
    echo
    echo '## bench-mpi-link: the links'"'"' protocol alone'
    echo '```'
    "$BUILD/bin/bench-mpi-link" --mib 1024
    echo '```'
    echo
    echo "| topology | ranks | crystal-events (link: bytes) | s | crystal-events/s (link: GB/s) | busiest actor, s |"
    echo "|---|---:|---:|---:|---:|---|"
    conf="$work/shared:topologies/conf"
    run 1 "link: adf_reader -> consumer" "$work/link.xml" --conf "$conf"
    run 2 "link: adf_reader -> consumer" "$work/link.xml" --conf "$conf"
    for ranks in 1 2 4; do
        run $ranks "triple, spread" "$work/triple.xml" --strict --conf "$work/conf/triple:$conf"
    done
    run 3 "triple_mpi.xml (3 hosts)" topologies/triple_mpi.xml --strict --conf "$work/conf/triple:$conf"
    for ranks in 1 2 4; do
        run $ranks "agata45, spread" "$work/agata45.xml" --strict --conf "$work/conf/agata45:$conf"
    done
    echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$keep/results.md"
cat "$keep/results.md"
