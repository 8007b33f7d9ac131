#!/bin/sh
# record.sh: the recorded 3-rank run: topologies/triple_mpi.xml under mpirun -np 3 with its shipped settings (conf/triple_mpi/), triple.xml in one process on the same events, their outputs compared byte for byte.
#   [BUILD=DIR] sh sample_runs/mpi/record.sh LABEL
# Results in sample_runs/mpi/LABEL/: command.txt, run.log (stderr of every rank), table.txt (rank 0's
# table), report.tsv, single.log/single-table.txt (the one-process run), compare.txt.
set -eu
label=${1:?usage: record.sh LABEL}
BUILD=${BUILD:-build}
keep=sample_runs/mpi/$label
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$keep"
rm -rf build/triple build/triple_mpi
set -- mpirun -np 3 "$BUILD/bin/narwhal" run topologies/triple_mpi.xml --actors "$BUILD/actors" --report "$keep/report.tsv"
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads, $(mpirun --version | head -n 1), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$*"
} > "$keep/command.txt"
"$@" > "$keep/table.txt" 2> "$keep/run.log"
"$BUILD/bin/narwhal" run topologies/triple.xml --pipeline --actors "$BUILD/actors" > "$keep/single-table.txt" 2> "$keep/single.log"
{
    for f in output.adf output.narwhal.adf; do
        if cmp "build/triple/$f" "build/triple_mpi/$f"; then echo "$f: identical ($(wc -c < "build/triple_mpi/$f") bytes)"; fi
    done
    (cd build/triple/histo && find . -type f | sort) | while read -r f; do
        cmp "build/triple/histo/$f" "build/triple_mpi/histo/$f" && echo "histo/${f#./}: identical"
    done
} > "$keep/compare.txt"
cat "$keep/command.txt" "$keep/table.txt" "$keep/compare.txt"
