#!/bin/bash
# Session 53, call 4: one binary = 4d98921 + session53-patches/ab-plain-bound.patch. "head" =
# REDUCELAB_AB_PLAINBOUND unset (4d98921's kernels); "new" = 5: every short kernel of the states
# not read in team rounds (sum, dot, mean, norm, ...) held to five blocks per SM (48 registers),
# its grid capped at 8 of its own resident waves. Round 1 of the bench (head first), the bits of
# "new", then round 2 (new first) as time allows.
#   mkdir -p /tmp/o; B=265 timeout 280 bash devrun/q.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( ${B:-265} - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
bench() {  # $1 = round, $2 $3 = order
  for s in fixed:4194304x32 ragged:heavy:2097152:64 ragged:uniform:1048576:256; do for b in $2 $3; do
    [ $(left) -lt 30 ] && { echo "skip $b $1 $s: $(left) s left"; continue; }
    n=$(echo $s | tr ':' '_'); SECONDS=0
    if [ $b = new ]; then export REDUCELAB_AB_PLAINBOUND=5; else unset REDUCELAB_AB_PLAINBOUND; fi
    ./new/reducelab bench --segments $s --op sum,norm --dtype f64,f16,bf16,f32 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/$b-$1-$n.json > $O/$b-$1-$n.txt 2>&1
    echo "$b $1 $n: $SECONDS s"; save
  done; done
  unset REDUCELAB_AB_PLAINBOUND
}
bench r1 head new
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:*Ragged*:*Segments*'
export REDUCELAB_AB_PLAINBOUND=5; SECONDS=0
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i timeout $(( $(left) - 5 )) ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t-pb5-$i.log 2>&1 &
done; wait; unset REDUCELAB_AB_PLAINBOUND
echo "pb5 tests: $SECONDS s"; grep -h "PASSED\|FAILED" $O/t-pb5-*.log | sort | uniq -c | head; save
bench r2 new head
echo "total $(( $(date +%s) - T0 )) s"
