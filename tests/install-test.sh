#!/usr/bin/env bash
# install-test.sh: installs Narwhal into a temporary prefix, builds README's example actor against it, and runs it in a chain.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -C "$top" --no-print-directory install PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "install-test: make install failed"; exit 1; }
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
awk '/^```c$/{on=1; next} /^```$/{if(on) exit} on' "$top/README.md" >"$tmp/my_filter.c"
cc -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden $(pkg-config --cflags narwhal) \
    "$tmp/my_filter.c" -o "$tmp/my_filter.so" $(pkg-config --libs narwhal)
"$tmp/prefix/bin/narwhal" inspect "$tmp/my_filter.so" >"$tmp/inspect.log"
grep -q process_block "$tmp/inspect.log" || { cat "$tmp/inspect.log"; echo "install-test: inspect lists no process_block"; exit 1; }
mkdir -p "$tmp/conf"
"$top/build/tests/mkadf" "$tmp/in.adf" 50 >/dev/null
printf 'File %s\n' "$tmp/in.adf" >"$tmp/conf/ADFReader.conf"
printf 'File %s\n' "$tmp/out.adf" >"$tmp/conf/ADFWriter.conf"
cat >"$tmp/chain.xml" <<XML
<configuration>
  <producer><name>reader</name><library>adf_reader.so</library>
    <output_buffer_name>b1</output_buffer_name><size output_buffer="b1">200000</size></producer>
  <intermediary input_buffers="1" output_buffers="1"><name>mine</name><library>$tmp/my_filter.so</library>
    <data_source source_buffer="b1">reader</data_source>
    <output_buffer_name>b2</output_buffer_name><size output_buffer="b2">200000</size></intermediary>
  <consumer><name>writer</name><library>adf_writer.so</library>
    <data_source source_buffer="b2">mine</data_source></consumer>
</configuration>
XML
"$tmp/prefix/bin/narwhal" run "$tmp/chain.xml" --conf "$tmp/conf" >"$tmp/run.log" 2>&1 ||
    { cat "$tmp/run.log"; echo "install-test: the chain with the example actor failed"; exit 1; }
cmp "$tmp/in.adf" "$tmp/out.adf"
grep -q '\[my_filter\] [0-9]* frames' "$tmp/run.log" || { cat "$tmp/run.log"; echo "install-test: no count from my_filter"; exit 1; }
echo "install-test: README's actor built against the installed headers and pkg-config file; chain output equals input"
