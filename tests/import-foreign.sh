#!/bin/sh
# import-foreign.sh: a foreign basis end to end: a synthetic one written in the import format (tests/tools/mkforeign.c), imported by basisgen (grid detected, points outside the crystal left out, labels checked), then the generator and the adaptive PSA running on it.
#   BUILD=build sh tests/import-foreign.sh [DIR]      (DIR: build/foreign; the repository root is the working directory)
# Leaves in DIR: foreign.bin (the import), foreign.basis, import.txt (basisgen's report), stats.txt, conf/, run.log,
# output.adf.  check_detector's foreign_import_end_to_end runs it.
set -eu
BUILD=${BUILD:-build}
dir=${1:-$BUILD/foreign}
geo=detector/geometry/agata.geo
mkdir -p "$dir/conf"
"$BUILD/tests/mkforeign" "$geo" "$dir/foreign.bin"
"$BUILD/bin/basisgen" --import "$dir/foreign.bin" --geometry "$geo" -o "$dir/foreign.basis" | tee "$dir/import.txt"
"$BUILD/bin/basisgen" --stats "$dir/foreign.basis" > "$dir/stats.txt"
# generator -> psa -> adf_writer on the imported basis: 200 events of 1332 keV into the 180-crystal array
sed -e 's|<library>adf_reader.so</library>|<library>generator.so</library>|' \
    -e 's|<name>reader</name>|<name>generator</name>|' \
    -e 's|source_buffer="data1">reader<|source_buffer="data1">generator<|' topologies/psa.xml > "$dir/foreign.xml"
cat > "$dir/conf/Generator.conf" <<CONF
Array      detector/arrays/agata180.txt
Crystal    $geo
Basis      $dir/foreign.basis
Events     200
Threads    1
Source     lines
Lines      1332.492 1
Output     crystal truth
CONF
cat > "$dir/conf/PSA.conf" <<CONF
Basis      $dir/foreign.basis
Device     cpu
Threads    1
Search     adaptive
CONF
printf 'File %s\n' "$dir/output.adf" > "$dir/conf/ADFWriter.conf"
"$BUILD/bin/narwhal" run "$dir/foreign.xml" --actors "$BUILD/actors" --conf "$dir/conf" > "$dir/run.log" 2>&1
grep -E '^\[PSA\] [0-9]+ data:crystal frames' "$dir/run.log"
