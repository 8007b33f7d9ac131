#!/usr/bin/env bash
# make-agata.sh: writes a crystal-per-producer topology (NAME.xml) and its configuration directories (conf/NAME/) for an array of any size.
#
# usage: topologies/make-agata.sh [--crystals N] [--array FILE] [--name NAME] [--events N]
#                                 [--direction "DX DY DZ"] [--source NUCLIDE] [--per shape] [--dir DIR]
#
# One producer per crystal (generator.so, actor gen<ID>, emitting only its crystal's frames of
# events that every producer simulates whole, same Seed), one PSA per crystal (psa<ID>), the
# builder merging the N streams (input_buffers="N"), then tracker, histo and writer.  The
# producers are named and listed in the array file's order, three by three as triple clusters.
# Written: DIR/NAME.xml, DIR/conf/NAME/gen<ID>/Generator.conf (each producer its own, complete:
# the emulator gives an actor the first file of each name along its search list, it does not
# merge them), DIR/conf/NAME/{Builder,Tracker,Histo,ADFWriter}.conf.  The PSA reads the shared
# topologies/conf/PSA.conf (with an array that names its shapes, each PSA its own: below).
#   --crystals N   the array's first N crystals (a multiple of 3; default: all of the array)
#   --array FILE   the array (default detector/arrays/agata180.txt, agata45.txt for --crystals 45)
#   --name NAME    default agata<N>
#   --events N     events per run (default 20000: every producer simulates them all)
#   --direction    a pencil beam "DX DY DZ" instead of the default isotropic source
#   --source NUC   a nuclide's decays (60Co, ...: Generator.conf's Source) instead of one γ per event of three lines
#   --per shape    a producer and a PSA per crystal shape (gen_<geometry>, psa_<geometry>: every crystal of that
#                  shape) instead of per crystal, for an array that names its shapes
#   --dir DIR      where the topology goes (default: this script's directory, topologies/)
# Examples (from the repository root):
#   topologies/make-agata.sh --crystals 45                     # topologies/agata45.xml, 15 triple clusters
#   topologies/make-agata.sh --crystals 180                    # the whole array, 60 triple clusters
#   topologies/make-agata.sh --array detector/arrays/triple.txt --name triple --events 2000 \
#       --direction "-35 -25 -228"                            # topologies/triple.xml
#   topologies/make-agata.sh --array detector/arrays/triple-atc.txt --name triple_atc --events 2000 \
#       --direction "62 59 -216"                              # AGATA's cluster 0, shapes A, B, C
#   topologies/make-agata.sh --array detector/arrays/agata180-atc.txt --name full_chain_atc --per shape \
#       --source 60Co --events 50000                          # make run: AGATA's array, a PSA per shape
set -euo pipefail

die() { echo "make-agata.sh: $*" >&2; exit 2; }

crystals='' array='' name='' events=20000 direction='isotropic' source=lines per=crystal
dir=$(cd "$(dirname "$0")" && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
    --crystals) crystals=${2:?}; shift 2 ;;
    --array) array=${2:?}; shift 2 ;;
    --name) name=${2:?}; shift 2 ;;
    --events) events=${2:?}; shift 2 ;;
    --direction) direction=${2:?}; shift 2 ;;
    --source) source=${2:?}; shift 2 ;;
    --per) per=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    *) die "unknown argument '$1' (see the usage at the top of $0)" ;;
    esac
done
[ -z "$array" ] && { [ "$crystals" = 45 ] && array=detector/arrays/agata45.txt || array=detector/arrays/agata180.txt; }
[ -f "$array" ] || die "$array: no such array file (run from the repository root)"
mapfile -t ids < <(awk '$1 ~ /^[0-9]+$/ && NF == 14 { print $1 }' "$array")
mapfile -t types < <(awk '$1 ~ /^[0-9]+$/ && NF == 14 { print $2 }' "$array")
[ ${#ids[@]} -gt 0 ] || die "$array: no crystal lines (narwhal-array format: id type T R)"
[ -z "$crystals" ] && crystals=${#ids[@]}
[[ "$crystals" =~ ^[0-9]+$ ]] && [ "$crystals" -ge 3 ] && [ $((crystals % 3)) -eq 0 ] ||
    die "--crystals $crystals: a multiple of 3 (triple clusters)"
[ "$crystals" -le ${#ids[@]} ] || die "--crystals $crystals: $array has ${#ids[@]}"
[[ "$events" =~ ^[0-9]+$ ]] || die "--events $events: a count"
ids=("${ids[@]:0:$crystals}")
[ -z "$name" ] && name=agata$crystals
conf=$dir/conf/$name
mkdir -p "$conf"

# An array that names its crystals' shapes (detector/arrays/*-atc.txt: AGATA's A, B, C) gets one basis per shape,
# build/cache/<geometry file's name>.basis (make bases): the producers read them all (Bases), each PSA its
# crystals' shape's, in a PSA.conf of its own (the shared one with that Basis), as AGATA's PSAs do.
mapfile -t shapes < <(awk '$1 == "shapes" { for (i = 2; i <= NF && $i !~ /^#/; i++) print $i; exit }' "$array")
bases=()
for geo in "${shapes[@]}"; do
    bases+=("build/cache/$(basename "$geo" .geo).basis")
done
basis_line="Basis      build/cache/default.basis"
[ ${#bases[@]} -gt 0 ] && basis_line="Bases      ${bases[*]}"

# The producers' units: a crystal each (named by its id), or with --per shape the crystals of one shape each
# (named _<geometry>); their crystals and their shape.
units=() unit_ids=() unit_type=()
case "$per" in
crystal)
    for i in "${!ids[@]}"; do
        units+=("${ids[$i]}") unit_ids+=("${ids[$i]}") unit_type+=("${types[$i]}")
    done ;;
shape)
    [ ${#shapes[@]} -gt 0 ] || die "--per shape: $array names no shapes"
    for t in "${!shapes[@]}"; do
        list=()
        for i in "${!ids[@]}"; do
            [ "${types[$i]}" = "$t" ] && list+=("${ids[$i]}")
        done
        [ ${#list[@]} -gt 0 ] && units+=("_$(basename "${shapes[$t]}" .geo)") unit_ids+=("${list[*]}") unit_type+=("$t")
    done ;;
*) die "--per $per: crystal or shape" ;;
esac

# ---- the topology
buffer_size=4000000
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<!-- $name.xml: $crystals crystals of $array ($((crystals / 3)) triple clusters), a producer and a PSA per"
    echo "     $per, the builder merging their streams, tracker, histo, writer.  Written by"
    echo "     topologies/make-agata.sh; settings: conf/$name/ (gen<ID>/ per producer), then conf/. -->"
    echo '<configuration>'
    for id in "${units[@]}"; do
        cat <<EOF
  <producer>
    <name>gen$id</name>
    <hostname>localhost</hostname>
    <binary_code>generic_producer</binary_code>
    <library>generator.so</library>
    <output_buffer_name>traces$id</output_buffer_name>
    <size output_buffer="traces$id">$buffer_size</size>
  </producer>
  <intermediary input_buffers="1" output_buffers="1">
    <name>psa$id</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>psa.so</library>
    <data_source source_buffer="traces$id">gen$id</data_source>
    <output_buffer_name>hits$id</output_buffer_name>
    <size output_buffer="hits$id">$buffer_size</size>
  </intermediary>
EOF
    done
    echo "  <intermediary input_buffers=\"${#units[@]}\" output_buffers=\"1\">"
    echo '    <name>builder</name>'
    echo '    <hostname>localhost</hostname>'
    echo '    <binary_code>generic_filter</binary_code>'
    echo '    <library>builder.so</library>'
    for id in "${units[@]}"; do
        echo "    <data_source source_buffer=\"hits$id\">psa$id</data_source>"
    done
    cat <<EOF
    <output_buffer_name>events</output_buffer_name>
    <size output_buffer="events">$buffer_size</size>
  </intermediary>
  <intermediary input_buffers="1" output_buffers="1">
    <name>tracker</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>tracker.so</library>
    <data_source source_buffer="events">builder</data_source>
    <output_buffer_name>gammas</output_buffer_name>
    <size output_buffer="gammas">$buffer_size</size>
  </intermediary>
  <intermediary input_buffers="1" output_buffers="1">
    <name>histo</name>
    <hostname>localhost</hostname>
    <binary_code>generic_filter</binary_code>
    <library>histo.so</library>
    <data_source source_buffer="gammas">tracker</data_source>
    <output_buffer_name>spectra</output_buffer_name>
    <size output_buffer="spectra">$buffer_size</size>
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

# ---- one Generator.conf per producer: the same events everywhere, its crystals' frames; the first also the truth
source_lines="Source     lines
Lines      661.657 1  1173.228 1  1332.492 1"
source_note="One γ per event of 661.657, 1173.228 or 1332.492 keV (Source lines; full_chain.xml simulates 60Co decays,
# two γ rays per event)"
if [ "$source" != lines ]; then
    source_lines="Source     $source"
    source_note="$source decays (Source $source, sim/decay.c)"
fi
for u in "${!units[@]}"; do
    id=${units[$u]}
    mkdir -p "$conf/gen$id"
    output=crystal
    [ "$u" = 0 ] && output='crystal truth'
    if [ ${#bases[@]} -gt 0 ]; then
        mkdir -p "$conf/psa$id"
        sed -e "s|^Basis .*|Basis       ${bases[${unit_type[$u]}]}   # its crystals' shape (make bases)|" \
            -e "1s|^.*$|# PSA.conf of psa$id in $name.xml: topologies/conf/PSA.conf with its shape's basis (topologies/make-agata.sh).|" \
            topologies/conf/PSA.conf > "$conf/psa$id/PSA.conf"
    fi
    cat > "$conf/gen$id/Generator.conf" <<EOF
# Generator.conf of gen$id in $name.xml (written by topologies/make-agata.sh; keys: topologies/conf/Generator.conf).
# Every producer of $name.xml simulates the same events (same Seed, same settings) and emits only
# its crystal's data:crystal frames and meta:sync every SyncEvery ticks; gen${units[0]} also emits the truth.
# $source_note, at 10 kHz; Direction: isotropic or a pencil beam.
Array      $array
$basis_line
Seed       1
Events     $events
$source_lines
Rate       10000
Direction  $direction
Crystals   ${unit_ids[$u]}
Output     $output
SyncEvery  100000
EOF
done

cat > "$conf/Builder.conf" <<EOF
# Builder.conf for $name.xml (written by topologies/make-agata.sh; keys: topologies/conf/Builder.conf):
# the crystals whose streams the builder waits for from the start.
Window   50
Delay    100000
MaxHeld  100000
Crystals ${ids[*]}
EOF
cat > "$conf/Tracker.conf" <<EOF
# Tracker.conf for $name.xml (written by topologies/make-agata.sh; keys: topologies/conf/Tracker.conf):
# the array of the producers, and the PSA's events passed on as well (the summary compares hits with the truth).
Array     $array
KeepInput true
EOF
cat > "$conf/Histo.conf" <<EOF
# Histo.conf for $name.xml (written by topologies/make-agata.sh; keys: topologies/conf/Histo.conf).
OutputDir  build/$name/histo
WriteEvery 0
Device     auto
Formats    spe csv
Crystals   180
Segments   36

#          name      quantity     scope    bins   lo    hi      bins  lo   hi
Histogram  gamma     tracked.e    sum      4096   0     4096
Histogram  crystal   psa.core     sum      4096   0     4096
Histogram  hit       psa.e        sum      4096   0     4096
Histogram  core      psa.core     crystal  4096   0     4096

Plot       gamma crystal hit
EOF
cat > "$conf/ADFWriter.conf" <<EOF
# ADFWriter.conf for $name.xml (written by topologies/make-agata.sh): the PSA's events in an
# AGATA-readable file; the truth, the tracked γ rays and the end of data beside it.
File       build/$name/output.adf
Keys       data:psa event:data:psa   # the AGATA-readable file: AGATA's layouts only
OtherFile  beside                    # Narwhal's own frames (truth, tracked γ rays, meta:eof) in output.narwhal.adf
EOF
echo "make-agata.sh: $dir/$name.xml ($crystals crystals of $array) and $conf/"
