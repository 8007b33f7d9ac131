#!/usr/bin/env bash
# screenshot.sh: the --monitor page of topologies/full_chain.xml in the middle of a run, as headless Chromium draws it (page.png, page.html, status.json).
# Usage: sample_runs/monitor/screenshot.sh [BUILD] (default build), from the repository root.  A coarse basis
# (6 mm grid, seconds to make) stands for the default one; 200,000 events, pipelined; the picture is taken
# after SECONDS (default 8) of the run, then Ctrl-C ends it.
set -euo pipefail
build=${1:-build}
here=$(dirname "$0")
work=$build/monitor-sample
wait_s=${SECONDS_IN:-8}
mkdir -p "$work/conf"
[ -f "$work/coarse.basis" ] ||
  "$build/bin/basisgen" --quiet --geometry detector/geometry/agata.geo --grid 6 --field-grid 2 -o "$work/coarse.basis"
printf 'Basis %s\nSeed 7\nEvents 200000\nRate 10000\nOutput crystal truth\n' "$work/coarse.basis" >"$work/conf/Generator.conf"
printf 'Basis %s\n' "$work/coarse.basis" >"$work/conf/PSA.conf"
sed "s|^OutputDir .*|OutputDir $work/histo|; s|^Plot .*|Plot none|" topologies/conf/full_chain/Histo.conf >"$work/conf/Histo.conf"
printf 'File %s/out.adf\n' "$work" >"$work/conf/ADFWriter.conf"
"$build/bin/narwhal" run topologies/full_chain.xml --conf "$work/conf:topologies/conf" --pipeline --quiet \
  --monitor 0 --monitor-linger 30 >"$work/run.out" 2>"$work/run.err" &
pid=$!
trap 'kill -INT $pid 2>/dev/null; sleep 0.5; kill -INT $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'monitor: http' "$work/run.err" && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/run.err" | head -1)
sleep "$wait_s"
chrome=(chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/chromium" --virtual-time-budget=4000)
"${chrome[@]}" --window-size=1200,800 --screenshot="$here/page.png" "$url" 2>/dev/null
"${chrome[@]}" --dump-dom "$url" 2>/dev/null >"$here/page.html"
curl -s "${url}api/status" >"$here/status.json" 2>/dev/null || true
echo "monitor: $url; wrote $here/page.png, $here/page.html, $here/status.json"
