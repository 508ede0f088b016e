#!/bin/bash
# Session 53, call 4: one binary = 4d98921 + session53-patches/ab-plain-bound-var-uniform.patch.
# "head" = no switch (4d98921's kernels, SASS checked); "new" = REDUCELAB_AB_PLAINBOUND=5 (every
# short kernel of the states not read in team rounds held to five blocks per SM, grid capped at 8
# of its own resident waves) and REDUCELAB_AB_VARUNIFORM=1 (var's kTeamRows kernel merges rows that
# fill their team with the known counts' weights, shuffling 2-3 numbers a level instead of 6).
# Round 1 (head first), the bits of "new", round 2 (new first) as time allows.
#   mkdir -p /tmp/o; B=400 timeout 420 bash devrun/q.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( ${B:-400} - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
arm() { if [ $1 = new ]; then export REDUCELAB_AB_PLAINBOUND=5 REDUCELAB_AB_VARUNIFORM=1; else unset REDUCELAB_AB_PLAINBOUND REDUCELAB_AB_VARUNIFORM; fi; }
bench() {  # $1 = round, $2 $3 = order
  for c in "fixed:4194304x32 sum,var" "fixed:16777216x8 var" "ragged:heavy:2097152:64 sum" "ragged:uniform:1048576:256 sum"; do
    set -- $1 $2 $3 $c; s=$4; ops=$5
    for b in $2 $3; do
      [ $(left) -lt 25 ] && { echo "skip $b $1 $s: $(left) s left"; continue; }
      n=$(echo $s | tr ':' '_'); SECONDS=0; arm $b
      ./new/reducelab bench --segments $s --op $ops --dtype f64,f16,bf16,f32 --no-cub --rungs none \
        --determinism gpu_to_gpu --reps 20 --json $O/$b-$1-$n.json > $O/$b-$1-$n.txt 2>&1
      echo "$b $1 $n: $SECONDS s"; save
    done
  done
  arm head
}
bench r1 head new
F='ReproducibleSegments*:GpuTest.ReproducibleSegments*:*Ragged*:*Segments*:*Statistic*'
arm new; SECONDS=0
N=14; for i in $(seq 0 $((N-1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i timeout $(( $(left) - 5 )) ./new/reducelab_gpu_tests --gtest_filter="$F" > $O/t-new-$i.log 2>&1 &
done; wait; arm head
echo "new tests: $SECONDS s"; grep -h "PASSED\|FAILED" $O/t-new-*.log | sort | uniq -c | head; save
bench r2 new head
# Then, as time allows, where the instructions go (Nsight Compute source counters; the build has
# -lineinfo): var f32 over heavy ragged lists (the lane kernel) and over rows of 32 (new's kTeamRows).
srcprof() {  # $1 name, $2 arm, $3 segments
  [ $(left) -lt 60 ] && { echo "skip $1: $(left) s left"; return; }
  arm $2; SECONDS=0
  timeout $(( $(left) - 5 )) ncu --clock-control none --import-source yes -k regex:segment_short -c 1 \
    --section SourceCounters --section InstructionStats --section WarpStateStats -o /tmp/rep-$1 \
    ./new/reducelab bench --segments $3 --op var --dtype f32 --no-cub --rungs none --determinism gpu_to_gpu --reps 20 \
    > $O/ncu-src-$1.txt 2>&1
  ncu --import /tmp/rep-$1.ncu-rep --page details >> $O/ncu-src-$1.txt 2>&1
  ncu --import /tmp/rep-$1.ncu-rep --page source --csv --print-source cuda,sass 2>&1 | xz -T1 > $O/src-$1.csv.xz
  arm head; echo "$1: $SECONDS s"; save
}
srcprof var-f32-heavy head ragged:heavy:2097152:64
srcprof var-f32-rows32-new new fixed:4194304x32
echo "total $(( $(date +%s) - T0 )) s"
