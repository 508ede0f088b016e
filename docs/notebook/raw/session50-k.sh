#!/bin/bash
# Session 50, call 7 (the kept change, kTeamRoundsFor, against f61bf87), run on the device as
#   timeout 500 bash devrun/k.sh > /tmp/main.log 2>&1; cp /tmp/main.log /tmp/o/; tar czf $OUT/all.tgz -C /tmp/o .
# with devrun/bins.txz holding head/reducelab (f61bf87) and new/reducelab, new/reducelab_gpu_tests
# (the kept change, built before its commit). The project's own check of a build is
# scripts/gpu_check.sh --bin DIR repro-segments.
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc -T8 bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:ReproducibleGpu*:GpuTest.Reproducible*:GpuTest.OrderFree*:*Ragged*:*Segments*:*Statistic*'
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t$i.log 2>&1 &
done; wait
grep -h "PASSED\|FAILED" $O/t*.log | sort | uniq -c | head -20
compute-sanitizer --tool memcheck ./new/reducelab_gpu_tests --gtest_filter='*RaggedSameBitsAsTheCpu*' > $O/memcheck.log 2>&1
tail -2 $O/memcheck.log
for r in r1 r2; do for b in head new; do
  for s in ragged:heavy:2097152:64 ragged:uniform:1048576:256; do
    n=$(echo $s | tr ':' '_')
    ./$b/reducelab bench --segments $s --op var,std_mean,logsumexp,norm --dtype f32,f64,bf16 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/$b-stats-$r-$n.json > $O/$b-stats-$r-$n.txt 2>&1
  done
done; done
for b in head new; do
  ncu --clock-control none -k regex:segment_short -c 1 --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section SchedulerStats --section InstructionStats \
    ./$b/reducelab bench --segments ragged:heavy:2097152:64 --op var --dtype f32 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 20 > $O/ncu-var-$b.txt 2>&1
done
