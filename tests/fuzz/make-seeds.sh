#!/usr/bin/env bash
# make-seeds.sh: writes the fuzz targets' seed corpora (tests/fuzz/seeds-*/chain-*.adf) from real output of each stage of the chain.
# usage: BUILD=build tests/fuzz/make-seeds.sh [BASIS]     (after make build-tests; BASIS: build/fuzz/fuzz.basis)
# The generator simulates a few cascades on the fuzz targets' coarse basis (a crystal selection, so that
# meta:sync frames come too) and the chain runs four times, one stage longer each time, so that every
# actor's seeds are what the actor before it really emits: traces for the PSA, data:psa for the builder,
# its events for the tracker, the tracker's output (events, data:tracked, truth) for histo, the writer,
# dump and summary.  Each seed is a few consecutive whole frames cut from a stage's file.  Files not named
# chain-* (reproducers of findings, hand-made cases) are left as they are.
set -euo pipefail
BUILD=${BUILD:-build}
basis=$(realpath "${1:-build/fuzz/fuzz.basis}")
narwhal="$BUILD/bin/narwhal"
[ -x "$narwhal" ] && [ -f "$basis" ] || { echo "make-seeds: needs $narwhal and the basis $basis (make build-tests, make fuzz)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/narwhal-seeds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# a topology of the generator, then the filters named, then adf_writer (stage NAME writes NAME.adf)
topology() {
    local name=$1 prev=generator size
    shift
    mkdir -p "$tmp/conf/$name/writer"
    printf 'File %s/%s.adf\n' "$tmp" "$name" >"$tmp/conf/$name/writer/ADFWriter.conf"
    {
        echo '<configuration><producer><name>generator</name><hostname>localhost</hostname>'
        echo '<binary_code>generic_producer</binary_code><library>generator.so</library>'
        echo '<output_buffer_name>generator_out</output_buffer_name><size output_buffer="generator_out">16000000</size></producer>'
        for a in "$@"; do
            size=4000000
            echo "<intermediary input_buffers=\"1\" output_buffers=\"1\"><name>$a</name><hostname>localhost</hostname>"
            echo "<binary_code>generic_filter</binary_code><library>$a.so</library>"
            echo "<data_source source_buffer=\"${prev}_out\">$prev</data_source>"
            echo "<output_buffer_name>${a}_out</output_buffer_name><size output_buffer=\"${a}_out\">$size</size></intermediary>"
            prev=$a
        done
        echo '<consumer><name>writer</name><hostname>localhost</hostname><binary_code>generic_consumer</binary_code>'
        echo "<library>adf_writer.so</library><data_source source_buffer=\"${prev}_out\">$prev</data_source></consumer></configuration>"
    } >"$tmp/$name.xml"
    "$narwhal" run "$tmp/$name.xml" --actors "$BUILD/actors" --conf "$tmp/conf/$name:$tmp/conf" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log" >&2; exit 1; }
}

mkdir -p "$tmp/conf"
printf '%s\n' "Array detector/arrays/agata180.txt" "Crystal detector/geometry/agata.geo" "Basis $basis" "Seed 7" \
    "Events 40" "Threads 1" "Source cascade" "Cascade 344.279 778.904 1408.013" "Crystals 0-179" "SyncEvery 200000" \
    "Output crystal truth" >"$tmp/conf/Generator.conf"
printf 'Basis %s\nDevice cpu\nThreads 1\n' "$basis" >"$tmp/conf/PSA.conf"
cp topologies/conf/Builder.conf "$tmp/conf/"
printf 'Array detector/arrays/agata180.txt\nGeometry detector/geometry/agata.geo\nDevice cpu\nKeepInput true\n' \
    >"$tmp/conf/Tracker.conf"
topology crystal
topology psa psa
topology events psa builder
topology tracked psa builder tracker

# "offset length id" of each top-level frame of a file (sub-frames are the indented lines)
frames() { "$narwhal" dump "$1" | awk '/^[0-9]/ && $2 ~ /^[0-9]+$/ { print $1, $2, $3 }'; }

# seed FILE OUT FIRST LAST: frames FIRST..LAST of FILE (indices into fr) as the seed OUT
seed() {
    local from to last=$4 f
    read -r from _ _ <<<"${fr[$3]}"
    read -r to f _ <<<"${fr[$last]}"
    dd if="$1" of="$2" iflag=skip_bytes,count_bytes skip="$from" count=$((to + f - from)) bs=65536 status=none
}

# cut STAGE TARGET WIDTH COUNT [ID]: the first and the last WIDTH frames of the stage's file (meta:sync, truth,
# meta:eof), and COUNT seeds of WIDTH consecutive frames starting at frames spread over those of key ID
# (default: those that are not meta:sync)
cut() {
    local file="$tmp/$1.adf" out="tests/fuzz/seeds-$2" width=$3 count=$4 id=${5:-} n k i
    local -a starts=()
    mapfile -t fr < <(frames "$file")
    n=${#fr[@]}
    for ((i = 0; i + width <= n; i++)); do
        if [ -n "$id" ]; then [[ ${fr[$i]} != *"$id" ]] || starts+=("$i");
        elif [[ ${fr[$i]} != *0xfa011101 ]]; then starts+=("$i"); fi
    done
    mkdir -p "$out"
    [ "$width" -lt "$n" ] || width=$n
    seed "$file" "$out/chain-$1-first.adf" 0 $((width - 1))
    seed "$file" "$out/chain-$1-last.adf" $((n - width)) $((n - 1))
    for ((k = 0; k < count && ${#starts[@]} > 0; k++)); do
        i=${starts[$((k * ${#starts[@]} / count))]}
        seed "$file" "$out/chain-$1-$k.adf" "$i" $((i + width - 1))
    done
}

for t in psa builder tracker histo histo_sink adf_writer adf_reader dump summary; do rm -f tests/fuzz/seeds-fuzz_$t/chain-*.adf; done
cut crystal fuzz_psa 2 12
cut psa fuzz_builder 12 12
cut events fuzz_tracker 6 12 0xca010102
for t in fuzz_histo fuzz_histo_sink; do cut tracked $t 8 10 0xca010102; cut crystal $t 2 3; done
cut tracked fuzz_adf_writer 6 8
cut tracked fuzz_adf_reader 6 6 0xca010102
cut crystal fuzz_adf_reader 2 2
cut tracked fuzz_dump 10 6 0xca010102
cut crystal fuzz_dump 2 2
cut tracked fuzz_summary 30 8 0xca010102
cut tracked fuzz_summary 1000000 0
du -sh tests/fuzz/seeds-* | sed 's/^/make-seeds: /'
