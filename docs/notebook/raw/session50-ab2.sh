#!/bin/bash
# Session 50, call 3 (the A/B of session 49's whole patch), run on the device as
#   timeout 550 bash devrun/ab2.sh > /tmp/main.log 2>&1; cp /tmp/main.log /tmp/o/; tar czf $OUT/all.tgz -C /tmp/o .
# with devrun/bins.txz as in session49-patches/ab-call.sh (head/reducelab, new/reducelab,
# new/reducelab_gpu_tests). The device tool returns at most 8 files, hence the tarball.
# Second A/B call: one --segments list per bench run (the CLI takes one), all output tarred.
cd devrun && mkdir -p w && (test -x w/new/reducelab || (xz -dc -T8 bins.txz | tar xf - -C w)) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
run_b() {
  local b=$1; shift
  if [ $b = b5 ]; then REDUCELAB_AB_BOUND5=1 ./new/reducelab "$@"
  elif [ $b = p0 ]; then REDUCELAB_AB_PREFETCH=0 ./new/reducelab "$@"
  else ./$b/reducelab "$@"; fi
}
bench() {
  for s in ragged:heavy:2097152:64 ragged:uniform:1048576:256 ragged:heavy:65536:2048; do
    n=$(echo $s | tr ':' '_')
    run_b $1 bench --segments $s --op sum,dot --dtype f32,f64 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 30 --json $O/$1-$2-$n.json > $O/$1-$2-$n.txt 2>&1
  done
}
bench head r1; bench new r1; bench b5 r1; bench p0 r1; bench new r2; bench head r2; bench b5 r2
for b in head new b5; do
  for s in ragged:heavy:2097152:64 ragged:uniform:1048576:256; do
    n=$(echo $s | tr ':' '_')
    run_b $b bench --segments $s --op var,logsumexp,norm --dtype f32,f64,bf16 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/$b-stats-$n.json > $O/$b-stats-$n.txt 2>&1
  done
done
for b in b5; do
  REDUCELAB_AB_BOUND5=1 ncu --clock-control none -k regex:segment_short -c 1 --section SpeedOfLight --section InstructionStats \
    --section Occupancy --section SchedulerStats --section LaunchStats \
    ./new/reducelab bench --segments ragged:heavy:2097152:64 --op sum --dtype f32 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 20 > $O/ncu-$b.txt 2>&1
done
