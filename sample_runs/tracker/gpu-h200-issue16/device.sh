#!/bin/sh
# device.sh (run on the lent H200 from the repository root with .gpudeps, and build/tracking/src-{new,old}.tar.gz made by `git archive HEAD` and `git archive 74de874`): one call: build HEAD (new) and 74de874 (old) from archives; check_tracker (GPU = CPU); bench-tracker old vs new; the table tracked on the GPU
set -u
. ./.gpudeps/env.sh
out=$OUT; log=$out/all.log
for v in new old; do mkdir -p /tmp/$v; tar xzf build/tracking/src-$v.tar.gz -C /tmp/$v; done
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $log; echo "CPU threads: $(nproc)" >> $log
(cd /tmp/new && make -j16 BUILD=build build/actors/tracker.so build/tests/check_tracker build/bin/bench-tracker > /tmp/build-new.log 2>&1) || { tail -30 /tmp/build-new.log; exit 1; }
(cd /tmp/old && make -j16 BUILD=build build/bin/bench-tracker > /tmp/build-old.log 2>&1) || { tail -30 /tmp/build-old.log; exit 1; }
grep -E "warning|error" /tmp/build-new.log | grep -v kit_spec | head -5 >> $log
cd /tmp/new
CK_VERBOSITY=normal BUILD=build build/tests/check_tracker > $out/check.log 2>&1; echo "check_tracker rc=$?" >> $log
grep -E "Checks|:[EF]:|GPU|SKIP" $out/check.log >> $log
B="--events1 400000 --events30 40000 --naive1 20000 --naive30 1000"
for r in 1 2; do
  echo "=== old (74de874), 16 threads + GPU, run $r" >> $log; OMP_NUM_THREADS=16 /tmp/old/build/bin/bench-tracker $B >> $log 2>&1
  echo "=== new --segment, 16 threads + GPU, run $r" >> $log; OMP_NUM_THREADS=16 build/bin/bench-tracker --segment $B >> $log 2>&1
  echo "=== new, issue-16 input, 16 threads + GPU, run $r" >> $log; OMP_NUM_THREADS=16 build/bin/bench-tracker $B >> $log 2>&1
done
P="--events1 100000 --events30 5000 --naive1 10000 --naive30 300"
for r in 1 2; do
  echo "=== per core: old (74de874), run $r" >> $log; OMP_NUM_THREADS=1 /tmp/old/build/bin/bench-tracker $P 2>&1 | grep -E "^\| (str|opt)" >> $log
  echo "=== per core: new --segment, run $r" >> $log; OMP_NUM_THREADS=1 build/bin/bench-tracker --segment $P 2>&1 | grep -E "^\| (str|opt)|differ" >> $log
  echo "=== per core: new, issue-16 input, run $r" >> $log; OMP_NUM_THREADS=1 build/bin/bench-tracker $P 2>&1 | grep -E "^\| (str|opt)|differ" >> $log
done
OMP_NUM_THREADS=16 build/bin/bench-tracker --study /tmp/study --set table --events1 100000 --events30 3000 > $out/study-gpu.log 2>&1
echo "study rc=$?" >> $log
tail -60 $log
