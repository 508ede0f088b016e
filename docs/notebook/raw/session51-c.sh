#!/bin/bash
# Session 51, call 1: one binary pair (HEAD + var-three-blocks.patch + the A/B switch of
# session51-patches/ab-bounds.patch). Bits first, then the A/B bench, steps skipped when time runs short:
#  - tests and memcheck of the defaults (var's lane kernel at three blocks, logsumexp bound-free);
#  - bench round 1, "head" = REDUCELAB_AB_VARBOUND=2 (HEAD's var bound; logsumexp as HEAD) and
#    "new" = the defaults + REDUCELAB_AB_LSEBOUND=3 (logsumexp's lane kernel at three blocks);
#  - the same tests and memcheck with REDUCELAB_AB_LSEBOUND=3; bench round 2.
# norm is the control (the same kernel in both). Run on the device as
#   mkdir -p /tmp/o; timeout 495 bash devrun/c.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( 470 - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:ReproducibleGpu*:GpuTest.Reproducible*:GpuTest.OrderFree*:*Ragged*:*Segments*:*Statistic*'
bits() {  # $1 = default | lse3
  if [ $1 = lse3 ]; then export REDUCELAB_AB_LSEBOUND=3; else unset REDUCELAB_AB_LSEBOUND; fi
  SECONDS=0
  N=14; for i in $(seq 0 $((N-1))); do
    GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t-$1-$i.log 2>&1 &
  done; wait
  echo "$1 tests: $SECONDS s"; grep -h "PASSED\|FAILED" $O/t-$1-*.log | sort | uniq -c | head -20
  SECONDS=0
  compute-sanitizer --tool memcheck ./new/reducelab_gpu_tests --gtest_filter='*RaggedSameBitsAsTheCpu*' > $O/memcheck-$1.log 2>&1
  echo "$1 memcheck: $SECONDS s"; tail -2 $O/memcheck-$1.log
  unset REDUCELAB_AB_LSEBOUND; save
}
bench() {  # $1 = round
  for b in head new; do for s in ragged:heavy:2097152:64 ragged:uniform:1048576:256; do
    [ $(left) -lt 40 ] && { echo "skip $b $1 $s: $(left) s left"; continue; }
    n=$(echo $s | tr ':' '_'); SECONDS=0
    if [ $b = head ]; then export REDUCELAB_AB_VARBOUND=2; unset REDUCELAB_AB_LSEBOUND;
    else unset REDUCELAB_AB_VARBOUND; export REDUCELAB_AB_LSEBOUND=3; fi
    ./new/reducelab bench --segments $s --op var,std_mean,logsumexp,norm --dtype f32,f64,f16,bf16 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/$b-$1-$n.json > $O/$b-$1-$n.txt 2>&1
    echo "$b $1 $n: $SECONDS s, rc $?"; save
  done; done
  unset REDUCELAB_AB_VARBOUND REDUCELAB_AB_LSEBOUND
}
bits default
bench r1
[ $(left) -gt 150 ] && bits lse3 || echo "skip lse3 bits: $(left) s left"
bench r2
echo "total $(( $(date +%s) - T0 )) s"
