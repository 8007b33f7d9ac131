#!/bin/sh
# block-sanitize.sh: on the GPU machine, compute-sanitizer (memcheck, racecheck, synccheck) over the PSA's GPU block: psa.xml on a small generated file, full and adaptive search, each output compared with the CPU's.
#   device command:  . ./.gpudeps/env.sh; sh sample_runs/psa/block-sanitize.sh [EVENTS]
set -u
events=${1:-1500}
out=${OUT:-build/block-sanitize}
work=build/block-sanitize-work
mkdir -p "$out" "$work/gen" build/cache
make -j16 build-all > "$out/build.log" 2>&1 || { tail -n 20 "$out/build.log"; exit 1; }
[ -e build/cache/default.basis ] || build/bin/basisgen --quiet -o build/cache/default.basis >> "$out/build.log" 2>&1
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/gen/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/gen/ADFWriter.conf"
build/bin/narwhal run topologies/simulate.xml --conf "$work/gen:topologies/conf" > "$out/gen.log" 2>&1
status=0
conf() { # NAME KEY=VALUE...
    d=$work/conf-$1
    shift
    mkdir -p "$d"
    printf 'File %s\nRepeat 1\nMaxFrames 0\n' "$work/input.adf" > "$d/ADFReader.conf"
    printf 'File %s\n' "$d/out.adf" > "$d/ADFWriter.conf"
    sed '/^Device /d; /^Search /d' topologies/conf/PSA.conf > "$d/PSA.conf"
    for kv in "$@"; do echo "$kv" >> "$d/PSA.conf"; done
}
for search in full adaptive; do
    conf "cpu-$search" "Device cpu" "Search $search"
    build/bin/narwhal run topologies/psa.xml --conf "$work/conf-cpu-$search:topologies/conf" > "$out/cpu-$search.log" 2>&1 || status=1
    for tool in memcheck racecheck synccheck; do
        conf "$tool-$search" "Device gpu" "Search $search"
        timeout 280 compute-sanitizer --tool $tool --error-exitcode 9 build/bin/narwhal run topologies/psa.xml \
            --conf "$work/conf-$tool-$search:topologies/conf" > "$out/$tool-$search.log" 2>&1 || status=1
        echo "$search, $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' "$out/$tool-$search.log" | tail -n 1)" \
            "$(cmp -s "$work/conf-cpu-$search/out.adf" "$work/conf-$tool-$search/out.adf" && echo '; output same as the CPU' || echo '; output DIFFERS')"
    done
done
exit $status
