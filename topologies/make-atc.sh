#!/usr/bin/env bash
# make-atc.sh: writes full_chain_atc.xml and conf/full_chain_atc/: the whole chain on AGATA's own array, each crystal of its shape (A, B, C).
#
# usage: topologies/make-atc.sh [--events N] [--dir DIR]
#
# AGATA's 180 crystals in triple clusters (detector/arrays/agata180-atc.txt: ids 3 * cluster + shape,
# the shapes' geometry files named by the array).  A PSA reads one basis, as each of AGATA's crystals'
# PSA reads its own in its own configuration directory, so the chain has a producer and a PSA per
# shape: gen_A emits the data:crystal frames of the 60 A crystals (ids 0, 3, ...) and the truth, gen_B
# and gen_C those of the B and C crystals (every producer simulates every event whole: same Seed, same
# events; each reads the three bases, for the segment that collects each deposit); psa_A reads
# build/cache/agata_A.basis, ...; the builder merges the three streams, then tracker, histo, writer as
# in full_chain.xml.  The bases: make bases (about 40 s each on 2 cores).
# Written: DIR/full_chain_atc.xml, DIR/conf/full_chain_atc/{gen,psa}_{A,B,C}/ (each producer's
# Generator.conf and each PSA's PSA.conf complete: topologies/conf/PSA.conf with its shape's Basis,
# since the emulator takes the first file of a name on an actor's search list, it does not merge),
# DIR/conf/full_chain_atc/{Builder,Tracker,Histo,ADFWriter}.conf.
#   --events N   60Co decays per run (default 50000, as full_chain.xml)
#   --dir DIR    where the topology goes (default: this script's directory, topologies/)
set -euo pipefail

die() { echo "make-atc.sh: $*" >&2; exit 2; }

events=50000
dir=$(cd "$(dirname "$0")" && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
    --events) events=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    *) die "unknown argument '$1' (see the usage at the top of $0)" ;;
    esac
done
[[ "$events" =~ ^[0-9]+$ ]] || die "--events $events: a count"
array=detector/arrays/agata180-atc.txt
[ -f "$array" ] && [ -f topologies/conf/PSA.conf ] || die "run from the repository root"
name=full_chain_atc
conf=$dir/conf/$name
shapes=(A B C)
buffer=16000000

{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<!-- $name.xml: the whole chain on AGATA's 180 crystals in triple clusters, each of its shape (A, B, C):"
    echo "     a producer and a PSA per shape (each PSA its shape's basis), the builder merging the three"
    echo "     streams, tracker, histo, writer.  Written by topologies/make-atc.sh; settings: conf/$name/. -->"
    echo '<configuration>'
    for s in "${shapes[@]}"; do
        cat <<EOF
  <producer>
    <name>gen_$s</name>
    <hostname>localhost</hostname>
    <binary_code>generic_producer</binary_code>
    <library>generator.so</library>
    <output_buffer_name>crystals_$s</output_buffer_name>
    <size output_buffer="crystals_$s">$buffer</size>
  </producer>
  <intermediary input_buffers="1" output_buffers="1">
    <name>psa_$s</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>psa.so</library>
    <data_source source_buffer="crystals_$s">gen_$s</data_source>
    <output_buffer_name>hits_$s</output_buffer_name>
    <size output_buffer="hits_$s">4000000</size>
  </intermediary>
EOF
    done
    cat <<EOF
  <intermediary input_buffers="3" output_buffers="1">
    <name>builder</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>builder.so</library>
    <data_source source_buffer="hits_A">psa_A</data_source>
    <data_source source_buffer="hits_B">psa_B</data_source>
    <data_source source_buffer="hits_C">psa_C</data_source>
    <output_buffer_name>events</output_buffer_name>
    <size output_buffer="events">4000000</size>
  </intermediary>
  <intermediary input_buffers="1" output_buffers="1">
    <name>tracker</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>tracker.so</library>
    <data_source source_buffer="events">builder</data_source>
    <output_buffer_name>gammas</output_buffer_name>
    <size output_buffer="gammas">4000000</size>
  </intermediary>
  <intermediary input_buffers="1" output_buffers="1">
    <name>histo</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>histo.so</library>
    <data_source source_buffer="gammas">tracker</data_source>
    <output_buffer_name>spectra</output_buffer_name>
    <size output_buffer="spectra">4000000</size>
  </intermediary>
  <consumer>
    <name>writer</name>
    <hostname>localhost</hostname>
    <binary_code>generic_consumer</binary_code>
    <library>adf_writer.so</library>
    <data_source source_buffer="spectra">histo</data_source>
  </consumer>
</configuration>
EOF
} > "$dir/$name.xml"

bases="build/cache/agata_A.basis build/cache/agata_B.basis build/cache/agata_C.basis"
for t in 0 1 2; do
    s=${shapes[$t]}
    ids=$(awk -v t=$t '$1 ~ /^[0-9]+$/ && NF == 14 && $2 == t { printf "%s%s", sep, $1; sep = " " }' "$array")
    output=crystal
    [ $t = 0 ] && output='crystal truth'
    mkdir -p "$conf/gen_$s" "$conf/psa_$s"
    cat > "$conf/gen_$s/Generator.conf" <<EOF
# Generator.conf of gen_$s in $name.xml (written by topologies/make-atc.sh; keys: topologies/conf/Generator.conf):
# full_chain.xml's 60Co source on AGATA's own array; this producer emits the frames of the crystals of shape $s.
Array      $array
Bases      $bases
Seed       1
Events     $events
Source     60Co
Rate       10000
Output     $output
Crystals   $ids
SyncEvery  100000
EOF
    sed -e "s|^Basis .*|Basis       build/cache/agata_$s.basis   # shape $s's basis (make bases)|" topologies/conf/PSA.conf |
        sed -e "1s|^.*$|# PSA.conf of psa_$s in $name.xml: topologies/conf/PSA.conf with shape $s's basis (written by topologies/make-atc.sh).|" \
        > "$conf/psa_$s/PSA.conf"
done
cat > "$conf/Builder.conf" <<EOF
# Builder.conf of $name.xml (written by topologies/make-atc.sh): the 180 crystals' streams are waited for.
Window   50
Delay    100000
MaxHeld  100000
Crystals 0-179
EOF
cat > "$conf/Tracker.conf" <<EOF
# Tracker.conf of $name.xml (written by topologies/make-atc.sh): AGATA's array; the PSA's events pass on too.
Array     $array
KeepInput true
EOF
sed -e "s|build/full_chain/|build/$name/|" topologies/conf/full_chain/Histo.conf > "$conf/Histo.conf"
sed -e "s|build/full_chain/|build/$name/|" topologies/conf/full_chain/ADFWriter.conf > "$conf/ADFWriter.conf"
echo "make-atc.sh: $dir/$name.xml and $conf/"
