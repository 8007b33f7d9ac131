#!/usr/bin/env bash
# plot.sh: makes the detector pictures of sample_runs/detector/ from the default basis (gnuplot, pngcairo).
# Run from the repository root after `make build/bin/basisgen build/bin/detdump` and the default basis exists.
set -euo pipefail
basis=${1:-build/cache/default.basis}
out=sample_runs/detector
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump=build/bin/detdump

$dump signals "$basis" 21 5 5 > "$tmp/front.dat"
$dump signals "$basis" 21 5 45 > "$tmp/middle.dat"
$dump signals "$basis" 21 5 85 > "$tmp/back.dat"
$dump slice detector/geometry/agata.geo 2 30 > "$tmp/slice.dat"
$dump rise "$basis" > "$tmp/rise.dat"
$dump array detector/arrays/agata180.txt detector/geometry/agata.geo > "$tmp/array180.dat"
$dump array detector/arrays/agata45.txt detector/geometry/agata.geo > "$tmp/array45.dat"

gnuplot <<GP
set terminal pngcairo size 1200,1400 font ",11"
set output "$out/signals.png"
set multiplot layout 3,1 title "37 signals of three basis points (sector A; hit segment +1, core -1, 36 segments thin)"
set xlabel "time after the interaction (ns)"
set ylabel "charge (units of the full charge)"
set grid
set key outside right
do for [f in "front middle back"] {
  file = "$tmp/".f.".dat"
  hdr = system("head -1 ".file)
  seg = int(system("head -1 ".file." | sed -E 's/.*segment ([0-9]+).*/\\\\1/'"))
  set title f." of the crystal: ".substr(hdr, 3, strstrt(hdr, ";") - 1)
  plot for [c=2:37] file u 1:c w l lc rgb "#b0b0b0" notitle, \
       file u 1:(column(seg+2)) w l lw 3 lc rgb "#d62728" t sprintf("segment %d (hit)", seg), \
       file u 1:38 w l lw 3 lc rgb "#1f77b4" t "core", \
       for [k in "-1 1 -6 6"] file u 1:(column(((seg + int(k)) % 36 + 36) % 36 + 2)) w l lw 1.5 t sprintf("segment %d", ((seg + int(k)) % 36 + 36) % 36)
}
unset multiplot

set terminal pngcairo size 900,800 font ",11"
set output "$out/weighting_slice.png"
set title "weighting potential of segment A3 (channel 2) on the plane z = 30 mm (1 mm field grid)"
set xlabel "x (mm)"; set ylabel "y (mm)"; set size ratio -1
set cbrange [0:1]; set palette rgbformulae 33,13,10
unset key; unset grid
plot "$tmp/slice.dat" u 1:2:3 w image

set terminal pngcairo size 900,600 font ",11"
set output "$out/rise_time.png"
set size noratio
set title "core 10-90 % rise times of the default basis (10 ns bins)"
set xlabel "rise time (ns)"; set ylabel "points"; set grid
set style fill solid 0.6
plot "$tmp/rise.dat" u (\$1+5):2 w boxes lc rgb "#1f77b4" notitle

set terminal pngcairo size 1200,700 font ",11"
set output "$out/array.png"
set title "the 180-crystal array seen from the target (Hammer projection, beam axis +z at the centre; red: the 1pi subset)"
unset xlabel; unset ylabel; unset grid; unset xtics; unset ytics; unset border
set size ratio -1
plot "$tmp/array180.dat" u 1:2 w l lc rgb "#404040" notitle, "$tmp/array45.dat" u 1:2 w l lw 2 lc rgb "#d62728" notitle
GP
echo "plot.sh: wrote $out/signals.png weighting_slice.png rise_time.png array.png"
