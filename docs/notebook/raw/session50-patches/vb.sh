#!/bin/bash
# Session 50, call 9: the var family's ragged lane kernel held to 2 blocks (the committed bound)
# against 3 blocks (REDUCELAB_AB_VARBOUND=3 of ab-var-bound.patch: 80 registers, more stack),
# two rounds interleaved. Run on the device as
#   timeout 150 bash devrun/vb.sh > /tmp/main.log 2>&1; cp /tmp/main.log /tmp/o/; tar czf $OUT/all.tgz -C /tmp/o .
# with devrun/cli.tgz holding new/reducelab (HEAD b8f21e7's code + ab-var-bound.patch, stripped).
cd devrun && mkdir -p w && (tar xzf cli.tgz -C w) && cd w
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
for r in r1 r2; do for vb in 2 3; do
  for s in ragged:heavy:2097152:64 ragged:uniform:1048576:256; do
    n=$(echo $s | tr ':' '_')
    if [ $vb = 3 ]; then export REDUCELAB_AB_VARBOUND=3; else unset REDUCELAB_AB_VARBOUND; fi
    ./new/reducelab bench --segments $s --op var,std_mean --dtype f32,f64,bf16 --no-cub --rungs none \
      --determinism gpu_to_gpu --reps 20 --json $O/vb$vb-$r-$n.json > $O/vb$vb-$r-$n.txt 2>&1
  done
done; done
