#!/bin/bash
# Session 53, call 2: the landed build (main + kThreeBlocks, whose segment kernels' SASS equals
# call 1's tested kernels). Bits (14 shards of the segment/ragged/statistic/reproducible GPU
# tests, memcheck of the ragged bit tests), then the gpu_to_gpu cost over the default along rows
# and over ragged lists, then the whole-array gpu_to_gpu sweep at 2^24, 2^27 and 2^30 if time is left.
# Run on the device as
#   mkdir -p /tmp/o; B=470 timeout 500 bash devrun/r.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( ${B:-440} - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
echo "unpacked: $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:ReproducibleGpu*:GpuTest.Reproducible*:GpuTest.OrderFree*:*Ragged*:*Segments*:*Statistic*'
SECONDS=0
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t-$i.log 2>&1 &
done; wait
echo "tests: $SECONDS s"; grep -h "PASSED\|FAILED" $O/t-*.log | sort | uniq -c | head -20
SECONDS=0
timeout 60 compute-sanitizer --tool memcheck ./new/reducelab_gpu_tests --gtest_filter='*RaggedSameBitsAsTheCpu*' > $O/memcheck.log 2>&1
echo "memcheck: $SECONDS s"; tail -3 $O/memcheck.log; save
for s in fixed:4194304x32 fixed:131072x1024 fixed:32768x4096 ragged:heavy:2097152:64 ragged:uniform:1048576:256 ragged:uniform:65536:1024; do
  [ $(left) -lt 40 ] && { echo "skip $s: $(left) s left"; continue; }
  n=$(echo $s | tr ':' '_'); SECONDS=0
  ./new/reducelab bench --segments $s --op sum,var,std_mean,logsumexp --dtype f32,f64,f16,bf16 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 20 --json $O/seg-$n.json > $O/seg-$n.txt 2>&1
  echo "$n: $SECONDS s, rc $?"; save
done
if [ $(left) -gt 60 ]; then SECONDS=0
  timeout $(( $(left) - 10 )) ./new/reducelab sweep --op sum,dot,mean,norm --dtype f32,f64 --no-cub --rungs none --no-ceilings \
    --from 24 --to 30 --step 3 --reps 20 --determinism gpu_to_gpu --json $O/sweep.json > $O/sweep.txt 2>&1
  echo "sweep: $SECONDS s, rc $?"; save
fi
echo "total $(( $(date +%s) - T0 )) s"
