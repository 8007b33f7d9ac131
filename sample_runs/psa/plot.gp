# plot.gp: the accuracy curve of a PSA sample run against AGATA's measured resolution.
#   gnuplot -e "csv='accuracy.csv'; png='accuracy.png'; name='full search, h200'" sample_runs/psa/plot.gp
set terminal pngcairo size 900,600
set output png
set title sprintf('PSA position resolution, single-interaction crystals (%s)', name)
set xlabel 'energy deposited, keV'
set ylabel 'RMS of found - true, mm'
set logscale x
set xrange [40:2500]
set yrange [0:10]
set key top right
set grid
plot csv using 1:3 with linespoints title 'x', \
     '' using 1:4 with linespoints title 'y', \
     '' using 1:5 with linespoints title 'z', \
     2.7 + 6.2 * sqrt(100.0 / x) with lines dashtype 2 title 'AGATA measured sigma(E) (Siciliano et al. 2021)'
