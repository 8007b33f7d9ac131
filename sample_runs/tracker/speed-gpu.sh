#!/bin/sh
# speed-gpu.sh: the tracker's speed before and after session 5's work on it (issue 20), side by side in one call on the GPU machine.
#
# Here, from the repository root (makes build/tracker-speed/src-{new,old}.tar.gz by git archive of HEAD and
# OLD; OLD defaults to the tree before the session's first tracker commit):
#     sh sample_runs/tracker/speed-gpu.sh --prepare [OLD]
# On the GPU machine, from the repository root, with .gpudeps and build/tracker-speed carried:
#     sh sample_runs/tracker/speed-gpu.sh
# It builds both trees (the old one with the new tools/bench_tracker.c, whose --block the old lacks; the
# tracker's interfaces it calls are unchanged), runs check_tracker (GPU = CPU, bit for bit, with the new
# kernels), then bench-tracker old and new on the same events, one after the other:
#   1. the replay chain's calls: 1332 keV at M = 1 and M = 2 (about 2 and 4 points per event, a 60Co decay
#      has 3.8), 880 events per call as the actor's blocks hold;
#   2. the whole-batch table of docs/PERF.md: M = 1 (400,000 events) and M = 30 (40,000);
#   3. one CPU thread, M = 1 and 30;
#   4. the actor as the replay chain runs it: 200,000 60Co decays (the generator's truth as GammaEvents,
#      ge2adf's event:data:psa), read in blocks of 234,000 bytes (about 880 of its 266-byte events, as the builder's blocks hold),
#      tracked with KeepInput and written, sequentially: the tracker's seconds in process_block and in its
#      engine, old and new, and the two outputs compared byte for byte.
# Every path's tracks are compared with the optimised CPU path's in each run (bench-tracker fails otherwise).
# Key lines to stdout; everything to $OUT/speed.log (or sample_runs/tracker/speed-gpu.log without $OUT).
set -u
if [ "${1:-}" = "--prepare" ]; then
    old=${2:-466ebbc^}
    mkdir -p build/tracker-speed
    git archive --format=tar.gz -o build/tracker-speed/src-new.tar.gz HEAD
    git archive --format=tar.gz -o build/tracker-speed/src-old.tar.gz "$old"
    printf 'new: %s\nold: %s\n' "$(git rev-parse --short HEAD)" "$(git rev-parse --short "$old")" \
        | tee build/tracker-speed/versions.txt
    exit 0
fi
# the build and test dependencies: carried .debs where the machine lacks them
pkg-config --exists check libxml-2.0 2>/dev/null || { [ -f .gpudeps/env.sh ] && . ./.gpudeps/env.sh; }
log=${OUT:-$(pwd)/sample_runs/tracker}/speed.log
jobs=$(nproc)
for v in new old; do
    rm -rf /tmp/speed-$v && mkdir -p /tmp/speed-$v && tar xzf build/tracker-speed/src-$v.tar.gz -C /tmp/speed-$v || exit 1
done
cp /tmp/speed-new/tools/bench_tracker.c /tmp/speed-old/tools/bench_tracker.c
{
    cat build/tracker-speed/versions.txt 2>/dev/null
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
    echo "CPU threads: $jobs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$log"
actors="build/bin/narwhal build/actors/adf_reader.so build/actors/adf_writer.so build/actors/tracker.so"
(cd /tmp/speed-new && make -j"$jobs" BUILD=build $actors build/actors/generator.so build/tests/check_tracker \
    build/bin/bench-tracker build/bin/ge2adf > /tmp/speed-build-new.log 2>&1) || { tail -30 /tmp/speed-build-new.log; exit 1; }
(cd /tmp/speed-old && make -j"$jobs" BUILD=build $actors build/bin/bench-tracker > /tmp/speed-build-old.log 2>&1) \
    || { tail -30 /tmp/speed-build-old.log; exit 1; }
cd /tmp/speed-new
CK_VERBOSITY=normal BUILD=build build/tests/check_tracker > /tmp/speed-check.log 2>&1
echo "check_tracker rc=$?" >> "$log"
grep -E "Checks|:[EF]:|SKIP" /tmp/speed-check.log >> "$log"

# bench TITLE THREADS ARGS...: old then new, the whole output to the log
bench() {
    title=$1 threads=$2
    shift 2
    for v in old new; do
        echo "=== $title: $v" >> "$log"
        (cd /tmp/speed-$v && OMP_NUM_THREADS=$threads build/bin/bench-tracker "$@") >> "$log" 2>&1
        echo "bench-tracker rc=$?" >> "$log"
    done
}
all=$jobs
bench "1. the chain's calls: 880 events per call, M = 1 and 2, $all threads" "$all" \
    --events1 200000 --events30 200000 --mult 2 --block 880 --naive1 2000 --naive30 2000
bench "2. whole batches, M = 1 and 30, $all threads" "$all" \
    --events1 400000 --events30 40000 --naive1 20000 --naive30 1000
bench "3. one thread, M = 1 and 30" 1 --events1 100000 --events30 5000 --naive1 1000 --naive30 100

# 4. the actor
act=/tmp/speed-actor
rm -rf $act && mkdir -p $act/gen $act/conf-old $act/conf-new
printf 'Source 60Co\nEvents 200000\nOutput truth\nGammaEvents %s/events.txt\n' $act > $act/gen/Generator.conf
printf 'File %s/truth.adf\n' $act > $act/gen/ADFWriter.conf
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf $act/gen:topologies/conf --quiet >> "$log" 2>&1
build/bin/ge2adf $act/events.txt $act/psa.adf >> "$log" 2>&1
cat > $act/track.xml <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <producer>
    <name>reader</name> <hostname>localhost</hostname> <binary_code>generic_producer</binary_code>
    <library>adf_reader.so</library> <output_buffer_name>events</output_buffer_name>
    <size output_buffer="events">234000</size>
  </producer>
  <intermediary input_buffers="1" output_buffers="1">
    <name>tracker</name> <hostname>localhost</hostname> <binary_code>generic_filter</binary_code>
    <library>tracker.so</library> <data_source source_buffer="events">reader</data_source>
    <output_buffer_name>gammas</output_buffer_name> <size output_buffer="gammas">2000000</size>
  </intermediary>
  <consumer>
    <name>writer</name> <hostname>localhost</hostname> <binary_code>generic_consumer</binary_code>
    <library>adf_writer.so</library> <data_source source_buffer="gammas">tracker</data_source>
  </consumer>
</configuration>
XML
for v in old new; do
    printf 'File %s/psa.adf\n' $act > $act/conf-$v/ADFReader.conf
    printf 'File %s/out-%s.adf\n' $act $v > $act/conf-$v/ADFWriter.conf
    printf 'KeepInput true\n' > $act/conf-$v/Tracker.conf
    for r in 1 2; do
        echo "=== 4. the actor, 880-event blocks, sequential: $v, run $r" >> "$log"
        (cd /tmp/speed-$v && build/bin/narwhal run $act/track.xml --actors build/actors \
            --conf $act/conf-$v:topologies/conf) > $act/run-$v.log 2>&1
        echo "narwhal rc=$?" >> "$log"
        grep -E "tracking on|tracking,|^tracker |blocks ran" $act/run-$v.log >> "$log"
    done
done
cmp $act/out-old.adf $act/out-new.adf >> "$log" 2>&1 && echo "4. outputs old and new: identical" >> "$log"
grep -E "^(===|check_tracker|bench-tracker rc|narwhal rc|new:|old:|4\. )|Checks|:[EF]:|SKIP|differ|GPU phases|^\| (optimised|GPU)|tracking,|^tracker |^cmp|differ:" "$log"
