#!/bin/sh
# run.sh: on the H200, one call (session 11): large blocks on 2 MiB pages (adf_block_alloc; NARWHAL_HUGE_PAGES=off
# keeps base pages) and the emulator's one-walk frame count, in the replay chain (Neighbours off, 64 MB blocks):
# sequential rows alternating the environment's setting, replay_chain_wide.xml; the Check suites CHECKS first.
#   device command (from a tree snapshot):  . ./.gpudeps/env.sh; sh sample_runs/full_chain/h200-huge11/run.sh [STEPS]
#   STEPS: any of bench rounds chain (default: chain); CHECKS: the suites run first; EVENTS: generator events of the
#   chain's input (910000); SEQ_ROWS, WIDE, WIDE_ROWS, CONF_ROWS: throughput.sh's (defaults below).
# Logs under $OUT (else build/huge11), packed into $OUT/huge11.tar.gz.
set -u
steps=${1:-chain}
out=${OUT:-build/huge11}
. "$(dirname "$0")/../../gpu-common.sh"
CHECKS=${CHECKS-check_adf check_psa check_io check_shipped}
gpu_prepare "$out/logs" 300
{ echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"; \
  grep -E 'AnonHugePages|MemFree' /proc/meminfo; } | tee "$out/logs/thp.txt"
# calls 6-7: SEQ_ROWS="ADFReader.conf:ReadAhead:on" (the default) five / three times, WIDE=3 / 2, call 7 CHECKS="check_adf check_io check_tracker check_histo check_confdirs check_shipped check_lifecycle"
# call 5: SEQ_ROWS="env:NARWHAL_COUNT_THREAD:off env:NARWHAL_COUNT_THREAD:on" three times, WIDE=2, CHECKS="check_tracker check_confdirs check_lifecycle"
# call 2: SEQ_ROWS="Tracker.conf:Threads:1 Tracker.conf:Threads:auto" three times, WIDE_ROWS="Tracker.conf:Threads:1 Tracker.conf:Threads:auto"
seq_rows="env:NARWHAL_HUGE_PAGES:off env:NARWHAL_HUGE_PAGES:on env:NARWHAL_HUGE_PAGES:off env:NARWHAL_HUGE_PAGES:on \
env:NARWHAL_HUGE_PAGES:off env:NARWHAL_HUGE_PAGES:on"
show="time in process_block|ReadAhead|large reads|emulator's own|^blocks ran|^(reader|psa[0-9]*|builder|tracker[0-9]*|histo|writer) "
gpu_psa_steps "$out/logs"
if gpu_has chain; then
    gpu_replay_in_memory
    label=huge11-chain
    SET="${SET-PSA.conf:Neighbours:off}" READER_BUFFER=64000000 KEEP_INPUT=1 CONF_ROWS="${CONF_ROWS-}" \
        SEQ_ROWS="${SEQ_ROWS-$seq_rows}" WIDE=${WIDE-0} WIDE_ROWS="${WIDE_ROWS-env:NARWHAL_HUGE_PAGES:off env:NARWHAL_HUGE_PAGES:on}" \
        sh sample_runs/full_chain/throughput.sh "$label" "${EVENTS:-910000}" > /dev/null 2>&1 || status=1
    mkdir -p "$out/logs/$label"
    gpu_show_chain "sample_runs/full_chain/$label" "$out/logs/$label" "$show"
    stamp "chain done"
fi
tar -czf "$out/huge11.tar.gz" -C "$out" logs
exit $status
