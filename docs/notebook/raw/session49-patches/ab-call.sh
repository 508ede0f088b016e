#!/bin/bash
# Session 50 ran it: the tests passed, but every bench run failed at once (the CLI takes one
# --segments list per run, not three) and the device tool returns at most 8 files. The call as
# run instead is ../session50-ab2.sh; its outcome is in ../h100-session50.md.
# The call that measures ragged-team-rounds.patch (session 49; not run: no machine came).
# Run from the repository root on the device, with devrun/bins.txz holding, stripped and
# compressed together (xz -6 --lzma2=preset=6,dict=256MiB, 55 MB):
#   head/reducelab                 f61bf87's CLI
#   new/reducelab                  the CLI of f61bf87 + ragged-team-rounds.patch + ab-switches.patch
#   new/reducelab_gpu_tests        the test binary of the same build
# The tree must stay under 64 MiB: move docs/results/*.json out for the call, or build on the
# device instead (scripts/device_build.sh, at the cost of device time).
# This call is only the A/B (head against the patch and its two variants, in one call). The
# project's own check of the build that is kept is scripts/gpu_check.sh --bin DIR repro-segments
# (its tests, then both modes on the rows and ragged lists); it is not written again here.
# The environment switches of ab-switches.patch: REDUCELAB_AB_BOUND5 launches the f32-accumulator
# lane kernels held to five blocks per SM; REDUCELAB_AB_PREFETCH sets the L2 prefetch depth.
cd devrun && mkdir -p w && (test -x w/new/reducelab || (xz -dc -T8 bins.txz | tar xf - -C w)) && cd w
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run_b() {
  local b=$1; shift
  if [ $b = b5 ]; then REDUCELAB_AB_BOUND5=1 ./new/reducelab "$@"
  elif [ $b = p0 ]; then REDUCELAB_AB_PREFETCH=0 ./new/reducelab "$@"
  else ./$b/reducelab "$@"; fi
}
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:ReproducibleGpu*:GpuTest.Reproducible*:GpuTest.OrderFree*:*Ragged*:*Segments*:*Statistic*'
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i ./new/reducelab_gpu_tests --gtest_filter="$F" > $OUT/t$i.log 2>&1 &
done; wait
grep -h "PASSED\|FAILED" $OUT/t*.log | sort | uniq -c | head -20
L="ragged:heavy:2097152:64,ragged:uniform:1048576:256,ragged:heavy:65536:2048"
bench() {
  run_b $1 bench --segments "$L" --op sum,dot --dtype f32,f64 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 30 --json $OUT/$1-$2.json > $OUT/$1-$2.txt 2>&1
}
bench head r1; bench new r1; bench new r2; bench head r2
compute-sanitizer --tool memcheck ./new/reducelab_gpu_tests --gtest_filter='*RaggedSameBitsAsTheCpu*' > $OUT/memcheck.log 2>&1
tail -3 $OUT/memcheck.log
bench b5 r1; bench p0 r1
for b in head new; do
  run_b $b bench --segments "ragged:heavy:2097152:64,ragged:uniform:1048576:256" --op var,logsumexp,norm2 \
    --dtype f32,f64,bf16 --no-cub --rungs none --determinism gpu_to_gpu --reps 20 \
    --json $OUT/$b-stats.json > $OUT/$b-stats.txt 2>&1
done
for b in new head; do
  ncu --clock-control none -k regex:segment_short -c 1 --section SpeedOfLight --section InstructionStats \
    --section Occupancy --section SchedulerStats \
    ./$b/reducelab bench --segments ragged:heavy:2097152:64 --op sum --dtype f32 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 20 > $OUT/ncu-$b.txt 2>&1
done
