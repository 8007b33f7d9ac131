set terminal pngcairo size 1400,800 noenhanced
set output 'spectra.png'
set datafile separator ','
set title 'Gamma-ray energies: tracked against untracked (1 keV bins)'
set xlabel 'energy (keV)'
set ylabel 'counts per keV'
set logscale y
set xrange [0:1600]
set yrange [0.8:*]
set key top left
set grid
plot 'spectra.csv' using 1:($4>0?$4:1/0) with steps lw 1 lc rgb '#999999' title 'sum of the crystal energies per event', \
     '' using 1:($3>0?$3:1/0) with steps lw 1 lc rgb '#1f77b4' title 'crystal by crystal (no tracking)', \
     '' using 1:($2>0?$2:1/0) with steps lw 1.5 lc rgb '#d62728' title 'tracked gamma rays'
