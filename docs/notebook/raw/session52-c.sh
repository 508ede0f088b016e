#!/bin/bash
# Session 52, call 1 (sent twelve times; no machine came, so it never ran): one binary pair = bf899f1 + session51-patches/ab-rows-bound.patch.
# "head" = bf899f1's kernels; "new" = REDUCELAB_AB_ROWSBOUND=3 (the var, var_mean and logsumexp
# states' kTeamRows, kTilesRows and kWarpRagged kernels held to three blocks per SM).
# Bits of "new" first (14 shards of the segment/ragged/statistic/reproducible GPU tests, memcheck
# of the ragged bit tests), then two A/B bench rounds (head first, then new first).
# Run on the device as
#   mkdir -p /tmp/o; B=430 timeout 460 bash devrun/c.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( ${B:-440} - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
echo "unpacked: $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:ReproducibleGpu*:GpuTest.Reproducible*:GpuTest.OrderFree*:*Ragged*:*Segments*:*Statistic*'
export REDUCELAB_AB_ROWSBOUND=3
SECONDS=0
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t-rb3-$i.log 2>&1 &
done; wait
echo "rb3 tests: $SECONDS s"; grep -h "PASSED\|FAILED" $O/t-rb3-*.log | sort | uniq -c | head -20
SECONDS=0
timeout 60 compute-sanitizer --tool memcheck ./new/reducelab_gpu_tests --gtest_filter='*RaggedSameBitsAsTheCpu*' > $O/memcheck-rb3.log 2>&1
echo "rb3 memcheck: $SECONDS s"; tail -3 $O/memcheck-rb3.log
unset REDUCELAB_AB_ROWSBOUND; save
bench() {  # $1 = round, $2 $3 = order
  for s in fixed:32768x4096 fixed:131072x1024 fixed:4194304x32 ragged:uniform:65536:1024; do for b in $2 $3; do
    [ $(left) -lt 30 ] && { echo "skip $b $1 $s: $(left) s left"; continue; }
    n=$(echo $s | tr ':' '_'); SECONDS=0
    if [ $b = new ]; then export REDUCELAB_AB_ROWSBOUND=3; else unset REDUCELAB_AB_ROWSBOUND; fi
    ./new/reducelab bench --segments $s --op var,logsumexp --dtype f64,f16,bf16,f32 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/$b-$1-$n.json > $O/$b-$1-$n.txt 2>&1
    echo "$b $1 $n: $SECONDS s, rc $?"; save
  done; done
  unset REDUCELAB_AB_ROWSBOUND
}
bench r1 head new
bench r2 new head
echo "total $(( $(date +%s) - T0 )) s"
