#!/bin/sh
# run.sh: reader → psa → builder → tracker → histo → writer under tests/narval_host (NARVAL's calls only), 1 and 3 instances of each filter, 2 cycles: the frames-in/frames-out table of every cycle and stage.
#   sh sample_runs/host/run.sh LABEL [EVENTS]      (EVENTS: mkadf events in the input, default 2000)
# tests/check_host.c's run with the actors on their default Device (the GPU when one is usable;
# DEVICE=cpu forces the CPU) and more events.  Results in sample_runs/host/LABEL/: host.txt (the
# tables, each host's verdict, the K=1 output against `narwhal run --strict`'s on the same input and
# configuration), and each run's log and report.  Work files: build/host-run/.  TREE names the tree
# in host.txt where git cannot (a copy of a working tree whose .git is another commit's).
set -eu
label=${1:?usage: run.sh LABEL [EVENTS]}
events=${2:-2000}
BUILD=${BUILD:-build}
READ_SIZE=65536
FILTER_SIZE=262144
keep=sample_runs/host/$label
work=$(pwd)/build/host-run
actors=$(pwd)/$BUILD/actors
stages="reader psa builder tracker histo writer"
rm -rf "$work"
mkdir -p "$keep" "$work"

sos=""
for a in adf_reader psa builder tracker histo adf_writer; do sos="$sos $BUILD/actors/$a.so"; done
if ! make BUILD="$BUILD" -j"$(nproc)" "$BUILD/bin/narwhal" "$BUILD/bin/basisgen" "$BUILD/tests/mkadf" \
    "$BUILD/tests/adf_keep" "$BUILD/tests/narval_host" $sos > "$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log"
    exit 1
fi
"$BUILD/bin/basisgen" --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 \
    -o "$work/coarse.basis" > "$work/basisgen.log" 2>&1
"$BUILD/tests/mkadf" "$work/mixed.adf" "$events" > /dev/null
"$BUILD/tests/adf_keep" "$work/mixed.adf" "$work/input.adf" 0x4E570101 > "$work/input.txt"

# conf STAGE OUT: the stage's configuration file as check_host writes it (OUT: the run's output directory)
conf() {
    device=${DEVICE:+Device $DEVICE}
    case $1 in
    reader) printf 'File %s\n' "$work/input.adf" ;;
    psa) printf 'Basis %s\n%s\n' "$work/coarse.basis" "$device" ;;
    builder) printf 'Window 50\nDelay 100000\n' ;;
    tracker) printf 'KeepInput true\n%s\n' "$device" ;;
    histo) printf 'OutputDir %s/spectra\n%s\nFormats csv\nPlot none\n' "$2" "$device"
           printf 'Histogram gamma tracked.e sum 2048 0 2048\nHistogram hit psa.e sum 2048 0 2048\n' ;;
    writer) printf 'File %s/out.adf\n' "$2" ;;
    esac
}
file_of() {
    case $1 in
    reader) echo ADFReader.conf ;; psa) echo PSA.conf ;; builder) echo Builder.conf ;;
    tracker) echo Tracker.conf ;; histo) echo Histo.conf ;; writer) echo ADFWriter.conf ;;
    esac
}
lib_of() { case $1 in reader) echo adf_reader.so ;; writer) echo adf_writer.so ;; *) echo "$1.so" ;; esac; }

# host NAME K STAGE...: the chain of those stages under narval_host, K instances of each filter, in build/host-run/NAME
host() {
    name=$1 k=$2
    dir=$work/$name
    shift 2
    chain=$*
    set --
    for s in $chain; do
        mkdir -p "$dir/$s"
        conf "$s" "$dir" > "$dir/$s/$(file_of "$s")"
        size=,$FILTER_SIZE
        [ "$s" = reader ] && size=,$READ_SIZE
        [ "$s" = writer ] && size=
        set -- "$@" "$s=$actors/$(lib_of "$s"),$dir/$s$size"
    done
    status=0
    "$BUILD/tests/narval_host" --instances "$k" --cycles 2 --pause-every 3 --report "$dir/report.tsv" \
        --keep "$dir/out.adf" "$@" > "$dir/table.txt" 2> "$dir/log.txt" || status=$?
    echo "$status" > "$dir/status"
    cp "$dir/log.txt" "$keep/host-$name.log"
    if [ -s "$dir/report.tsv" ]; then cp "$dir/report.tsv" "$keep/report-$name.tsv"; fi
}

# the same chain under narwhal run --strict, one configuration directory, in build/host-run/ref
reference() {
    dir=$work/ref
    mkdir -p "$dir/conf"
    for s in $stages; do conf "$s" "$dir" > "$dir/conf/$(file_of "$s")"; done
    {
        echo '<configuration>'
        echo "  <producer><name>reader</name><library>adf_reader.so</library><output_buffer_name>b0</output_buffer_name><size output_buffer=\"b0\">$READ_SIZE</size></producer>"
        i=1 prev=reader
        for s in psa builder tracker histo; do
            echo "  <intermediary input_buffers=\"1\" output_buffers=\"1\"><name>$s</name><library>$s.so</library><data_source source_buffer=\"b$((i - 1))\">$prev</data_source><output_buffer_name>b$i</output_buffer_name><size output_buffer=\"b$i\">$FILTER_SIZE</size></intermediary>"
            i=$((i + 1)) prev=$s
        done
        echo "  <consumer><name>writer</name><library>adf_writer.so</library><data_source source_buffer=\"b4\">histo</data_source></consumer>"
        echo '</configuration>'
    } > "$dir/chain.xml"
    status=0
    "$BUILD/bin/narwhal" run "$dir/chain.xml" --strict --actors "$actors" --conf "$dir/conf" > "$dir/log.txt" 2>&1 || status=$?
    echo "$status" > "$dir/status"
    cp "$dir/log.txt" "$keep/narwhal-strict.log"
}

host k1 1 $stages
host k3 3 $stages
# the histogrammer's instances share one configuration, hence one OutputDir, which only one live
# instance may hold: the same chain without it shows the other filters split three ways
host k3-nohisto 3 reader psa builder tracker writer
reference

same() { if [ -f "$1" ] && [ -f "$2" ] && cmp -s "$1" "$2"; then echo "equal"; else echo "DIFFERENT (or missing)"; fi; }
verdict() { case $1 in 0) echo "0 (ok)" ;; 1) echo "1 (contract breached)" ;; 2) echo "2 (an actor's error: aborted)" ;; *) echo "$1" ;; esac; }
{
    tree=${TREE:-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+changes')}
    echo "# narval_host: $label, $(date -u '+%Y-%m-%d %H:%M UTC'), tree $tree"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
    echo "machine: ${gpu:-no GPU}, $(nproc) cores"
    echo "input: $(cat "$work/input.txt") (mkadf, $events events, data:crystal only)"
    echo "buffers: reader $READ_SIZE bytes, filters $FILTER_SIZE bytes (fixed); PSA basis: 6 mm grid; Device: ${DEVICE:-default}"
    grep -h -m 3 -E '^\[(PSA|Tracker|Histo)\] (searching|tracking|counting) on' "$work/k1/log.txt" || true
    echo
    for run in "k1:1 instance of each filter" "k3:3 instances of each filter" \
        "k3-nohisto:3 instances of each filter, histo left out"; do
        name=${run%%:*}
        echo "## ${run#*:}: narval_host exit $(verdict "$(cat "$work/$name/status")")"
        echo
        cat "$work/$name/table.txt"
        grep -E '^host: |warning: |error: ' "$work/$name/log.txt" | head -n 20
        echo
    done
    echo "## against narwhal run --strict (exit $(verdict "$(cat "$work/ref/status")"))"
    for c in 1 2; do echo "1 instance, cycle $c: out.adf $(same "$work/k1/out.adf.cycle$c" "$work/ref/out.adf")"; done
    grep -E '^narwhal: ' "$work/ref/log.txt" | head -n 5 || true
} > "$keep/host.txt"
cat "$keep/host.txt"
