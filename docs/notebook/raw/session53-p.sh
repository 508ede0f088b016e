#!/bin/bash
# Session 53, call 3: where the gpu_to_gpu short kernels' time goes on the landed build (4d98921):
# Nsight Compute of segment_short_* (first launch) for f16 against f32 sum over heavy ragged
# lengths (f16 is slower than f32 there with half the bytes), f16 var and f64 sum over rows of 32.
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
T0=$(date +%s); left() { echo $(( ${B:-240} - ($(date +%s) - T0) )); }
cd devrun && mkdir -p w && rm -rf w/* && (xz -dc bins.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt; ncu --version | tail -1 | tee -a $O/gpu.txt
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
prof() {  # $1 name, $2 segments, $3 op, $4 dtype
  [ $(left) -lt 25 ] && { echo "skip $1: $(left) s left"; return; }
  SECONDS=0
  timeout $(( $(left) - 5 )) ncu --clock-control none -k regex:segment_short -c 1 $S \
    ./new/reducelab bench --segments $2 --op $3 --dtype $4 --no-cub --rungs none --determinism gpu_to_gpu --reps 20 \
    > $O/ncu-$1.txt 2>&1
  echo "$1: $SECONDS s"; save
}
prof sum-f32-heavy ragged:heavy:2097152:64 sum f32
prof sum-f16-heavy ragged:heavy:2097152:64 sum f16
prof var-f16-rows32 fixed:4194304x32 var f16
prof var-f32-rows32 fixed:4194304x32 var f32
prof sum-f64-rows32 fixed:4194304x32 sum f64
prof sum-f32-rows32 fixed:4194304x32 sum f32
prof var-f32-heavy ragged:heavy:2097152:64 var f32
echo "total $(( $(date +%s) - T0 )) s"
