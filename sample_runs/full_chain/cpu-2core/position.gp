set terminal pngcairo size 1400,600 noenhanced
set output 'position.png'
set datafile separator ','
set multiplot layout 1,2 title 'PSA position against the truth (same event, crystal and segment)'
set title 'residuals, PSA - truth'
set xlabel 'mm'
set ylabel 'hits per 0.5 mm'
set grid
plot 'residuals.csv' using 1:2 with steps lw 1.5 title 'x', '' using 1:3 with steps lw 1.5 title 'y', '' using 1:4 with steps lw 1.5 title 'z'
set title 'resolution against the hit energy'
set xlabel 'hit energy (keV)'
set ylabel 'rms (mm)'
set yrange [0:*]
set logscale x
set xrange [20:5000]
plot 'resolution.csv' using 3:5 with linespoints pt 7 lw 1.5 title 'x', '' using 3:6 with linespoints pt 7 lw 1.5 title 'y', '' using 3:7 with linespoints pt 7 lw 1.5 title 'z'
unset multiplot
