#!/bin/bash
# Session 51, call 3 (the last ~240 s of device time): the team-rounds states' other short paths
# held to three blocks per SM: kTeamRows (rows of one vector per lane), kTilesRows (rows longer than
# a tile) and kWarpRagged, where ptxas gives f64 94-110 and f16/bf16 90-128 registers (two blocks).
# One CLI: bf899f1 + session51-patches/ab-rows-bound.patch (refused: no device time left); "head" = bf899f1's kernels, "new" =
# REDUCELAB_AB_ROWSBOUND=3. One round, no tests (a measurement, not a change). Run on the device as
#   mkdir -p /tmp/o; timeout 190 bash devrun/r.sh 2>&1 | tee /tmp/o/main.log; tar czf $OUT/all.tgz -C /tmp/o .
save() { [ -n "$OUT" ] && tar czf $OUT/all.tgz -C /tmp/o . 2>/dev/null; }
cd devrun && mkdir -p w && (xz -dc cli.txz | tar xf - -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader | tee $O/gpu.txt
for s in fixed:32768x4096 fixed:4194304x32 fixed:131072x1024; do for b in head new; do
  n=$(echo $s | tr ':' '_'); SECONDS=0
  if [ $b = new ]; then export REDUCELAB_AB_ROWSBOUND=3; else unset REDUCELAB_AB_ROWSBOUND; fi
  ./new/reducelab bench --segments $s --op var,logsumexp --dtype f64,f16,bf16,f32 --no-cub --rungs none \
    --determinism gpu_to_gpu --reps 20 --json $O/$b-$n.json > $O/$b-$n.txt 2>&1
  echo "$b $n: $SECONDS s, rc $?"; save
done; done
