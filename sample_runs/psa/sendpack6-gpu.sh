#!/bin/sh
# sendpack6-gpu.sh: on the GPU machine, the PSA's sending step (issue 20, session 6): the build (this tree, BEFORE's beside it), the replay chain with Neighbours off run by both trees in turn (sequential twice each, pipelined, this tree's BlockParts 4 and 8), the PSA's output of both compared (Neighbours off and iterate), then check_psa and check_gpu in the time left.
#   device command:  . ./.gpudeps/env.sh; cd SNAPSHOT && BEFORE=DIR sh sample_runs/psa/sendpack6-gpu.sh [EVENTS] [SECONDS]
#   EVENTS: the replay chain's generator events (200000: about 430,000 crystal-events; its input in /dev/shm);
#   SECONDS: the call's budget (185): the suites get what is left.
# Logs under $OUT (else build/sendpack6-gpu), packed into $OUT/logs.tar.gz after every stage.
set -u
events=${1:-200000}
budget=${2:-185}
out=${OUT:-build/sendpack6-gpu}
logs=$out/logs
. "$(dirname "$0")/../gpu-common.sh"
stamp() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$logs/stamps.txt"; } # kept in the logs too
pack() { tar -czf "$out/logs.tar.gz" -C "$out" logs; }
gpu_open "$logs"
pack

work=build/replay_chain
mkdir -p /dev/shm/rc "$work/input-conf"
ln -sfn /dev/shm/rc "$work"
sed -e "s|^Events .*|Events     $events|" topologies/conf/full_chain/Generator.conf > "$work/input-conf/Generator.conf"
printf 'File %s\n' "$work/input.adf" > "$work/input-conf/ADFWriter.conf"
build/bin/narwhal run topologies/simulate.xml --actors build/actors --conf "$work/input-conf:topologies/conf" \
    > "$logs/input.log" 2>&1 || status=1
# conf-TAG: PSA.conf with Neighbours off (and BlockParts N)
psa_conf() {
    mkdir -p "$work/conf-$1"
    { sed 's|^Neighbours .*|Neighbours off|' topologies/conf/PSA.conf; [ -z "${2:-}" ] || echo "BlockParts $2"; } \
        > "$work/conf-$1/PSA.conf"
}
psa_conf off
psa_conf off4 4
psa_conf off8 8
stamp "input written"

# chain NAME TREE CONFDIR [options]: one replay run of TREE's narwhal and actors, its log, its output's md5
chain() {
    name=$1 tree=$2 extra=$3
    shift 3
    "$tree/build/bin/narwhal" run "$tree/topologies/replay_chain.xml" --actors "$tree/build/actors" \
        --conf "${extra:+$extra:}$tree/topologies/conf/replay_chain:$tree/topologies/conf" "$@" > "$logs/$name.log" 2>&1 \
        || status=1
    echo "$(md5sum < "$work/output.adf" | cut -c1-32) $name" >> "$logs/outputs.txt"
    { echo "== $name"; grep -E '^\[PSA\] time in process_block|^blocks ran' "$logs/$name.log"; } >> "$logs/summary.txt"
}
for i in 1 2; do
    chain "after-off-seq$i" . "$work/conf-off"
    chain "before-off-seq$i" "$BEFORE" "$work/conf-off"
done
chain after-off-pipe . "$work/conf-off" --pipeline
chain before-off-pipe "$BEFORE" "$work/conf-off" --pipeline
chain after-off4-seq . "$work/conf-off4"
chain after-off8-seq . "$work/conf-off8"
chain after-iterate-seq . ""
chain before-iterate-seq "$BEFORE" ""
cat "$logs/outputs.txt"
grep -E '^==|time in process_block|^blocks ran' "$logs/summary.txt" | cut -c1-700
stamp "chain done"
pack

left=$((budget - ($(date +%s) - start)))
for suite in check_psa check_gpu; do
    BUILD=build timeout "$left" tests/run-checks.sh "build/tests/$suite" > "$logs/$suite.txt" 2>&1 &
done
wait
for suite in check_psa check_gpu; do
    grep -E 'Checks|:[EF]:|passed' "$logs/$suite.txt" | head -n 8
done
stamp "checks done"
pack
exit $status
