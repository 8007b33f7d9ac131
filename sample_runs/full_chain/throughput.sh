#!/bin/sh
# throughput.sh: crystal-events per second through psa -> builder -> tracker -> histo, fed from a file (topologies/replay_chain.xml), sequential and pipelined.
#   sh sample_runs/full_chain/throughput.sh LABEL [EVENTS]    (EVENTS: generator events in the input file, 100000)
#   VARIANTS=1 adds rows: 64 MB blocks, a ring of 8, passive OpenMP waits, the adaptive search, the CPU.
#   PARTS="2 4 8" adds a pipelined row per PSA BlockParts value.
#   PSA_PARTS="1 2 3 4" adds a sequential and a pipelined row per PSA Parts value (a block cut into parts
#   worked on at once within the call).
#   CONF_ROWS="FILE:KEY:VALUE ..." adds a sequential and a pipelined row per setting (e.g. PSA.conf:Neighbours:off).
#   SEQ_ROWS="FILE:KEY:VALUE ..." adds a sequential row per setting, in that order (a setting may come again: rows
#   alternating two settings show the run-to-run spread; FILE:KEY:VALUE+FILE:KEY:VALUE sets several in one row);
#   env:NAME:VALUE sets an environment variable instead.
#   EXTRA_CONF=DIR puts a configuration directory before the replay chain's in every row.
#   SET="FILE:KEY:VALUE ..." changes those keys in every row of this tree (a directory before EXTRA_CONF's, its
#   files taken from EXTRA_CONF, the replay chain's or the shared directory).
#   PSAS="2 3" adds a pipelined row per count of PSA instances sharing the reader's blocks (round robin,
#   one configuration, one GPU), the builder merging their streams; TRACKERS="2" adds, for each, a row with
#   the tracker split likewise (histo merging).
#   WIDE=N adds N pipelined rows of topologies/replay_chain_wide.xml (64 MB blocks, 4 PSA and 2 tracker instances,
#   its own configuration after SET's and EXTRA_CONF's), one after the other: their spread is the run-to-run one.
#   WIDE_ROWS="FILE:KEY:VALUE ..." adds a pipelined row of replay_chain_wide.xml per setting, in that order (env: too).
#   READER_BUFFER=BYTES: the reader's output buffer in every row, BEFORE's too (the topologies' own otherwise).
#   KEEP_INPUT=1 reuses build/replay_chain/input.adf when it was written for the same EVENTS (a second call).
#   BEFORE=DIR adds sequential and pipelined rows of another version's tree (DIR: its sources, built in
#   DIR/build), on the same input in the same run: its narwhal, actors, topology and configuration (after SET's
#   and EXTRA_CONF's directories: their keys must be ones that version takes).
#   ALTERNATE=N (with BEFORE) adds N pairs of sequential rows, this tree's then BEFORE's, right after the first
#   two rows: pairs on a machine whose speed drifts from row to row.
#   After the table, a ratio line per row: the row against the machine's limits (bench-machine --shell,
#   tools/bench_limits.h): bytes (the input read out of the page cache once, by a copy at the CPU's
#   measured copy rate; its traces sent to the GPU once at the measured pinned upload rate) and operations
#   (the PSA's searches, from its log, x TERMS |d|^p terms a full search, 432933 for the default basis as
#   bench-psa prints it, x 8 FP32 instructions each, over the GPU's FP32 peak or the CPU's measured FMA rate).
# The input holds full_chain.xml's source (Generator.conf of conf/full_chain) with EVENTS events,
# written by topologies/simulate.xml.  Results: sample_runs/full_chain/LABEL/throughput.txt.
set -eu
label=${1:?usage: throughput.sh LABEL [EVENTS]}
events=${2:-100000}
BUILD=${BUILD:-build}
keep=sample_runs/full_chain/$label
work=build/replay_chain
mkdir -p "$keep" "$work/input-conf"
rm -rf "$work"/conf-* # override() builds on a directory's file: none left by an earlier run
narwhal="$BUILD/bin/narwhal"
rows=0

if [ "${KEEP_INPUT:-0}" = 1 ] && [ -e "$work/input.adf" ] && [ "$(cat "$work/input-events.txt" 2>/dev/null)" = "$events" ]; then
    echo "input kept: $work/input.adf ($events events)" > "$keep/throughput-input.log"
else
    rm -f "$work/input-events.txt"
    sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/input-conf/Generator.conf"
    printf 'File %s\n' "$work/input.adf" > "$work/input-conf/ADFWriter.conf"
    "$narwhal" run topologies/simulate.xml --actors "$BUILD/actors" --conf "$work/input-conf:topologies/conf" \
        > "$keep/throughput-input.log" 2>&1
    echo "$events" > "$work/input-events.txt"
fi
# with_reader_buffer TOPOLOGY [PREFIX]: the topology's path, or with READER_BUFFER a copy of it in $work (its name
# after PREFIX) with that reader buffer size
with_reader_buffer() {
    [ -n "${READER_BUFFER:-}" ] || { echo "$1"; return; }
    copy=$work/${2:-}$(basename "$1" .xml)_reader$READER_BUFFER.xml
    sed "s|<size output_buffer=\"crystals\">[0-9]*<|<size output_buffer=\"crystals\">$READER_BUFFER<|" "$1" > "$copy"
    grep -q "\"crystals\">$READER_BUFFER<" "$copy" || { echo "throughput.sh: no reader buffer in $1" >&2; exit 1; }
    echo "$copy"
}
topology=$(with_reader_buffer topologies/replay_chain.xml)
wide=$(with_reader_buffer topologies/replay_chain_wide.xml)

# replay NAME TOPOLOGY CONF [narwhal run options]: one run, its log and report; prints its table row
# (the version run: $run_narwhal with the actors of $run_actors)
run_narwhal=$narwhal run_actors=$BUILD/actors
replay() {
    name=$1 row_topology=$2 dirs=$3
    shift 3
    rows=$((rows + 1))
    printf '%s\n' "$name" > "$work/name-$rows.txt"
    "$run_narwhal" run "$row_topology" --actors "$run_actors" --conf "$dirs" --report "$work/report-$rows.tsv" "$@" \
        > "$keep/throughput-$rows.log" 2>&1
    awk -F'\t' -v mode="$name" '
        $1 == "run" { block = $5 }
        $1 == "kind" && $2 == "reader" && ($4 == "narwhal:crystal" || $4 == "data:crystal") { crystals = $5 }
        $1 == "actor" { name[++n] = $2; busy[n] = $10 }
        END {
            slow = 2
            for (i = 3; i < n; i++) if (busy[i] > busy[slow]) slow = i
            line = sprintf("| %s | %d | %.2f | %.0f |", mode, crystals, block, crystals / block)
            for (i = 2; i < n; i++) line = line sprintf(" %.2f |", busy[i])
            print line sprintf(" %s |", name[slow])
        }' "$work/report-$rows.tsv"
}

# override TAG FILE KEY VALUE: $work/conf-TAG (a directory before $conf) whose FILE is the one the rows read
# (that directory's own when a key was set there already, SET's, EXTRA_CONF's, the replay chain's or the
# shared one) with KEY set to VALUE
override() {
    dir=$work/conf-$1 file=$2 key=$3 value=$4
    mkdir -p "$dir"
    for src in "$dir/$file" "$work/conf-set/$file" "${EXTRA_CONF:-/nonexistent}/$file" \
        "topologies/conf/replay_chain/$file" "topologies/conf/$file"; do
        [ -e "$src" ] && break
    done
    if grep -q "^$key " "$src"; then sed "s|^$key .*|$key $value|" "$src"; else cat "$src"; echo "$key $value"; fi \
        > "$dir/$file.new"
    mv "$dir/$file.new" "$dir/$file"
}

# parse_spec FILE:KEY:VALUE: file, key and value
parse_spec() {
    file=${1%%:*} rest=${1#*:}
    key=${rest%%:*} value=${rest#*:}
}

for spec in ${SET:-}; do
    parse_spec "$spec"
    override set "$file" "$key" "$value"
done
# the directories before each topology's own: SET's, then EXTRA_CONF
first_dirs=${SET:+$work/conf-set:}${EXTRA_CONF:+$EXTRA_CONF:}
conf=${first_dirs}topologies/conf/replay_chain:topologies/conf

# split_actor NAME N IN OUT: the topology IN with filter NAME split into N instances (NAME1..NAMEN, sharing
# its input round robin, each with its own output buffer) and the actor reading NAME's output reading
# the N streams, written to OUT
split_actor() {
    awk -v name="$1" -v n="$2" '
        /<(intermediary|consumer)/ { held = $0 "\n"; holding = 1; next }
        holding { held = held $0 "\n"; if ($0 ~ /<\/(intermediary|consumer)>/) { holding = 0; flush() }; next }
        { print }
        function flush() {
            if (held ~ ("<name>" name "</name>")) {
                match(held, /<output_buffer_name>[^<]*</)
                out = substr(held, RSTART + 20, RLENGTH - 21)
                for (i = 1; i <= n; i++) {
                    b = held
                    sub("<name>" name "</name>", "<name>" name i "</name>", b)
                    sub(/">[^<]*<\/data_source>/, "\" share=\"round-robin&", b)
                    gsub("\"" out "\"", "\"" out i "\"", b)
                    gsub(">" out "<", ">" out i "<", b)
                    printf "%s", b
                }
            } else if (out != "" && held ~ ("source_buffer=\"" out "\"")) {
                sub(/input_buffers="1"/, "input_buffers=\"" n "\"", held)
                src = ""
                for (i = 1; i <= n; i++) src = src "    <data_source source_buffer=\"" out i "\">" name i "</data_source>\n"
                sub("[ ]*<data_source source_buffer=\"" out "\">" name "</data_source>\n", src, held)
                printf "%s", held
            } else printf "%s", held
        }' "$3" > "$4"
}

# ratios: each row against the limits (see the top); nothing without bench-machine
ratios() {
    [ -x "$BUILD/bin/bench-machine" ] || return 0
    "$BUILD/bin/bench-machine" --shell > "$work/machine.sh"
    . "$work/machine.sh"
    [ "$GPU_PRESENT" = 1 ] || GPU_H2D_BPS=0 GPU_PEAK_OPS=0 GPU_NAME=none
    bytes=$(stat -c %s "$work/input.adf")
    awk -v c="$CPU_COPY_BPS" -v f="$CPU_FMA_OPS" -v u="$GPU_H2D_BPS" -v o="$GPU_PEAK_OPS" -v g="$GPU_NAME" 'BEGIN {
        printf "# limits: CPU copy %.1f GB/s (read + written), FMA %.3g/s; GPU %s: upload %.1f GB/s, FP32 %.3g/s\n",
               c / 1e9, f, g, u / 1e9, o }'
    k=1
    while [ "$k" -le "$rows" ]; do
        grep -o '[0-9]* searches on the [A-Z]* (' "$keep/throughput-$k.log" > "$work/searches-$k.txt" || true
        awk -F'\t' -v name="$(cat "$work/name-$k.txt")" -v bytes="$bytes" -v list="$work/searches-$k.txt" \
            -v terms="${TERMS:-432933}" -v copy="$CPU_COPY_BPS" -v fma="$CPU_FMA_OPS" -v h2d="$GPU_H2D_BPS" -v gops="$GPU_PEAK_OPS" '
            BEGIN { while ((getline l < list) > 0) { split(l, w, " "); n[w[5]] += w[1] } }
            $1 == "run" { block = $5 }
            $1 == "kind" && $2 == "reader" && ($4 == "narwhal:crystal" || $4 == "data:crystal") { crystals = $5 }
            END {
                rate = crystals / block
                by_bytes = crystals / (2 * bytes / copy)
                line = sprintf("ratio: %s: %.0f crystal-events/s; bytes %.0f per crystal-event: page cache copy -> %.3g/s",
                               name, rate, bytes / crystals, by_bytes)
                if (h2d > 0 && n["GPU"] > 0) {
                    up = crystals / (bytes / h2d)
                    line = line sprintf(", upload -> %.3g/s", up)
                    if (up < by_bytes) by_bytes = up
                }
                # the searches as if exhaustive: a pruned search skips terms, so a ratio may pass 1
                t = 0
                if (n["GPU"] > 0 && gops > 0) t += n["GPU"] * terms * 8 / gops
                if (n["CPU"] > 0) t += n["CPU"] * terms * 8 / fma
                if (t > 0) {
                    by_ops = crystals / t
                    line = line sprintf("; operations %.3g per crystal-event (%.2f searches, GPU %d, CPU %d) -> %.3g/s",
                                        (n["GPU"] + n["CPU"]) * terms * 8 / crystals, (n["GPU"] + n["CPU"]) / crystals,
                                        n["GPU"], n["CPU"], by_ops)
                } else {
                    by_ops = 0
                    line = line "; operations not counted (no searches in the log)"
                }
                limit = by_ops > 0 && by_ops < by_bytes ? by_ops : by_bytes
                print line sprintf("; %.3g of the %s limit", rate / limit, limit == by_bytes ? "bytes" : "operations")
            }' "$work/report-$k.tsv"
        k=$((k + 1))
    done
}

# before_rows SEQUENTIAL_NAME [PIPELINED_NAME]: BEFORE's sequential row (and its pipelined one)
before_rows() {
    run_narwhal=$BEFORE/build/bin/narwhal run_actors=$BEFORE/build/actors
    before_conf=${first_dirs}$BEFORE/topologies/conf/replay_chain:$BEFORE/topologies/conf
    before_topology=$(with_reader_buffer "$BEFORE/topologies/replay_chain.xml" before_)
    replay "$1" "$before_topology" "$before_conf"
    if [ -n "${2:-}" ]; then replay "$2" "$before_topology" "$before_conf" --pipeline; fi
    run_narwhal=$narwhal run_actors=$BUILD/actors
}

variants() {
    sed 's/16000000/64000000/' topologies/replay_chain.xml > "$work/replay_chain_64MB.xml"
    replay "sequential, 64 MB blocks" "$work/replay_chain_64MB.xml" "$conf"
    replay "pipelined, 64 MB blocks" "$work/replay_chain_64MB.xml" "$conf" --pipeline
    replay "pipelined, ring of 8" "$topology" "$conf" --pipeline --ring 8
    OMP_WAIT_POLICY=passive replay "pipelined, OMP_WAIT_POLICY=passive" "$topology" "$conf" --pipeline
    override adaptive PSA.conf Search adaptive
    replay "pipelined, Search adaptive" "$topology" "$work/conf-adaptive:$conf" --pipeline
    override cpu PSA.conf Device cpu
    override cpu Tracker.conf Device cpu
    override cpu Histo.conf Device cpu
    override cpu ADFReader.conf MaxFrames 200000
    replay "sequential, all on the CPU, first 200,000 frames" "$topology" "$work/conf-cpu:$conf"
    replay "pipelined, all on the CPU, first 200,000 frames" "$topology" "$work/conf-cpu:$conf" --pipeline
}

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPU threads; $events generator events in $work/input.adf ($(du -h "$work/input.adf" | cut -f1))"
    echo "# load average before the runs: $(cut -d" " -f1-3 /proc/loadavg)"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
    fi
    echo "| mode | crystal-events | seconds | crystal-events/s | psa s | builder s | tracker s | histo s | busiest of the four |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
    replay sequential "$topology" "$conf"
    replay pipelined "$topology" "$conf" --pipeline
    i=1
    while [ -n "${BEFORE:-}" ] && [ "$i" -le "${ALTERNATE:-0}" ]; do
        replay "sequential ($i)" "$topology" "$conf"
        before_rows "sequential, before ($BEFORE) ($i)"
        i=$((i + 1))
    done
    for n in ${PARTS:-}; do
        override "parts$n" PSA.conf BlockParts "$n"
        replay "pipelined, BlockParts $n" "$topology" "$work/conf-parts$n:$conf" --pipeline
    done
    for n in ${PSA_PARTS:-}; do
        override "psaparts$n" PSA.conf Parts "$n"
        replay "sequential, Parts $n" "$topology" "$work/conf-psaparts$n:$conf"
        replay "pipelined, Parts $n" "$topology" "$work/conf-psaparts$n:$conf" --pipeline
    done
    for spec in ${CONF_ROWS:-}; do
        parse_spec "$spec"
        tag=$(printf '%s%s' "$key" "$value" | tr -cd 'A-Za-z0-9')
        override "$tag" "$file" "$key" "$value"
        replay "sequential, $key $value" "$topology" "$work/conf-$tag:$conf"
        replay "pipelined, $key $value" "$topology" "$work/conf-$tag:$conf" --pipeline
    done
    for spec in ${SEQ_ROWS:-}; do
        parse_spec "$spec"
        if [ "$file" = env ]; then
            export "$key=$value"
            replay "sequential, $key=$value" "$topology" "$conf"
            unset "$key"
            continue
        fi
        tag=$(printf '%s' "$spec" | tr -cd 'A-Za-z0-9') what=
        for part in $(printf '%s' "$spec" | tr '+' ' '); do
            parse_spec "$part"
            override "$tag" "$file" "$key" "$value"
            what="${what:+$what, }$key $value"
        done
        replay "sequential, $what" "$topology" "$work/conf-$tag:$conf"
    done
    for n in ${PSAS:-}; do
        split_actor psa "$n" "$topology" "$work/replay_chain_psa$n.xml"
        replay "pipelined, $n PSA instances" "$work/replay_chain_psa$n.xml" "$conf" --pipeline
        for t in ${TRACKERS:-}; do
            split_actor tracker "$t" "$work/replay_chain_psa$n.xml" "$work/replay_chain_psa${n}_tracker$t.xml"
            replay "pipelined, $n PSA and $t tracker instances" "$work/replay_chain_psa${n}_tracker$t.xml" "$conf" --pipeline
        done
    done
    k=1
    while [ "$k" -le "${WIDE:-0}" ]; do
        replay "pipelined, replay_chain_wide.xml ($k)" "$wide" \
            "${first_dirs}topologies/conf/replay_chain_wide:topologies/conf" --pipeline
        k=$((k + 1))
    done
    for spec in ${WIDE_ROWS:-}; do
        parse_spec "$spec"
        if [ "$file" = env ]; then
            export "$key=$value"
            replay "pipelined, replay_chain_wide.xml, $key=$value" "$wide" \
                "${first_dirs}topologies/conf/replay_chain_wide:topologies/conf" --pipeline
            unset "$key"
            continue
        fi
        tag=$(printf '%s%s' "$key" "$value" | tr -cd 'A-Za-z0-9')
        override "$tag" "$file" "$key" "$value"
        replay "pipelined, replay_chain_wide.xml, $key $value" "$wide" \
            "$work/conf-$tag:${first_dirs}topologies/conf/replay_chain_wide:topologies/conf" --pipeline
    done
    if [ "${VARIANTS:-0}" = 1 ]; then variants; fi
    if [ -n "${BEFORE:-}" ]; then
        before_rows "sequential, before ($BEFORE)" "pipelined, before ($BEFORE)"
    fi
    echo "# seconds: from the first block to the end of the flushes (the table's 'blocks ran'); per actor: in process_block"
    ratios
    grep -h -E '^\[(PSA|Tracker|Histo)\] (searching|tracking|counting) on' "$keep/throughput-1.log"
} > "$keep/throughput.txt"
cat "$keep/throughput.txt"
