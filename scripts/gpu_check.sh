#!/usr/bin/env bash
# One whole check on the GPU machine, in one call of the device tool. Each step logs to $OUT
# (or ./gpu-out) and the last lines printed are a short summary.
#   scripts/gpu_check.sh [--bin DIR] STEP...
# Steps: info, ctest, tests, large, bench, bench-all, production, tune, tune-small, sweep,
# sweep-production, profile, sanitize, axis-tests, other-tests (every test but the axis, segment
# and large ones), axis-sweep, axis-shapes, axis-all-ops, sanitize-axis, stats-tests (the
# statistics' tests), stats (every statistic x floating type at 2^27 beside sum), stats-int (the
# integer ones), stats-rows (the statistics along 131,072 x 1,024 rows beside sum), tensors-tests
# (the many-tensor list's tests), tensors (lists of 1,000 x 2^17 and heavy-tailed lengths), python
# (pip install the package for sm_90 with the machine's torch/CuPy, then python-tests and
# python-bench), python-tests (pytest python/tests against torch and CuPy, after an install),
# python-bench (python -m reducelab.bench: host time, whole arrays 2^10..2^30, axis shapes,
# statistics at 2^27; JSON in python-bench.json), repro (issue 14: the gpu_to_gpu tests, then the
# reproducible mode's cost beside the default, sum and dot of the four floating types at
# 2^10..2^30 in one table per type), repro-stats (issue 14's statistics: their gpu_to_gpu tests,
# then var, norm and logsumexp of f32 and f64 at 2^24, 2^27 and 2^30 in both modes),
# repro-segments (issue 14 along rows and over segments: the tests, then both modes side by side
# on the row shapes and ragged lists),
# multigpu-tests (issue 15: the sharded reduce over NCCL; on one GPU a 1-rank communicator and
# virtual ranks, on two the real ranks, both launch styles), multigpu-bench
# (reducelab_multigpu_bench on every GPU: local reduce, NCCL all-reduce of 4 and 16 bytes, the
# sharded sum/argmax/var at 2^30 and 2^10 per rank; JSON in multigpu-bench.json),
# multigpu-examples (both examples on every GPU). The multigpu steps export NCCL_NVLS_ENABLE=0
# (the setting) and need a build with REDUCELAB_WITH_NCCL. The python steps need no
# --bin and build nothing of the C++ tools.
# With --bin DIR the binaries come from DIR (built elsewhere and carried); otherwise the script
# configures and builds the release preset here first.
set -u -o pipefail
# Logs and results go to a work folder, packed into $OUT/results.tgz at the end (the device
# tool returns at most 8 files).
out=$(mktemp -d /tmp/gpu-check.XXXXXX)
dest=${OUT:-$PWD/gpu-out}
mkdir -p "$dest"
bin=""
if [ "${1:-}" = "--bin" ]; then bin=$2; shift 2; fi
python_only=1
for s in "$@"; do case $s in python|python-tests|python-bench) ;; *) python_only=0 ;; esac; done
if [ -z "$bin" ] && [ $python_only = 0 ]; then
  scripts/device_build.sh "$out/build.log" || { tar czf "$dest/results.tgz" -C "$out" .; exit 1; }
  bin=build/release
fi
cli=$bin/src/reducelab
[ -x "$cli" ] || cli=$bin/reducelab
tests=$bin/tests/reducelab_gpu_tests
[ -x "$tests" ] || tests=$bin/reducelab_gpu_tests
tune=$bin/src/reducelab_tune
[ -x "$tune" ] || tune=$bin/reducelab_tune
mgtests=$bin/tests/reducelab_multigpu_tests
[ -x "$mgtests" ] || mgtests=$bin/reducelab_multigpu_tests
mgbench=$bin/src/reducelab_multigpu_bench
[ -x "$mgbench" ] || mgbench=$bin/reducelab_multigpu_bench
mgexamples=$bin/examples
[ -d "$mgexamples" ] || mgexamples=$bin
summary=()
step() {  # step NAME LOGFILE COMMAND...
  local name=$1 log=$2; shift 2
  local start=$SECONDS
  "$@" >"$out/$log" 2>&1
  local rc=$?
  summary+=("$name: exit $rc in $((SECONDS - start)) s ($log)")
  # Packed after every step, so a call cut short by the device's time limit still returns what
  # it measured.
  printf '%s\n' "${summary[@]}" >"$out/summary.txt"
  tar czf "$dest/results.tgz" -C "$out" .
  return $rc
}
for s in "$@"; do
  case $s in
    info) step info info.log bash -c 'nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE | head -80' ;;
    ctest) step ctest ctest.log ctest --test-dir "$bin" -LE large --output-on-failure ;;
    tests)  # six gtest shards at once: the CPU references are the time (817 tests in ~3 min on
      # the H200's 16 cores, where one process took over 5 min for 339; session 17)
      step tests gpu-tests.log bash -c 'pids=(); for i in 0 1 2 3 4 5; do
          GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i "$0" --gtest_filter=-*Large* > "$1.$i" 2>&1 &
          pids+=($!); done; rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
        cat "$1".[0-5]; rm -f "$1".[0-5]; exit $rc' "$tests" "$out/gpu-tests" ;;
    large) step large gpu-large.log "$tests" --gtest_filter=*Large* ;;
    bench) step bench bench.log "$cli" bench --json "$out/bench.json" --md "$out/bench.md" ;;
    bench-all) step bench-all bench-all.log "$cli" bench --op sum,min,max,dot --json "$out/bench-all.json" --md "$out/bench-all.md" ;;
    production) step production production.log "$cli" bench --op core --dtype all --rungs none --json "$out/production.json" --md "$out/production.md" ;;
    stats) step stats stats.log "$cli" bench --op sum,stats --dtype f32,f64,f16,bf16 --rungs none --json "$out/stats.json" --md "$out/stats.md" ;;
    stats-int) step stats-int stats-int.log "$cli" bench --op sum,count_nonzero,any,all,aminmax --dtype i32,i64,u32,u64 --rungs none --json "$out/stats-int.json" --md "$out/stats-int.md" ;;
    stats-rows) step stats-rows stats-rows.log "$cli" bench --shape 131072x1024 --axis 1 --op sum,stats --dtype f32,f16 --json "$out/stats-rows.json" --md "$out/stats-rows.md" ;;
    tensors-tests) step tensors-tests tensors-tests.log "$tests" --gtest_filter='*Tensors*:*TinyTensors*:*EmptyList*:*WithoutATotal*:*ListCalls*:*ListErrors*:-*Large*' ;;
    tensors)  # 1,000 tensors of 2^17 f32 (the gradient-clipping list) and a heavy-tailed list
      step tensors tensors.log "$cli" bench --tensors fixed:1000x2^17 --op sum,norm,max,argmax,var --dtype f32 --json "$out/tensors.json" --md "$out/tensors.md"
      step tensors-heavy tensors-heavy.log "$cli" bench --tensors ragged:heavy:2^14:2^13 --op sum,norm --dtype f32,f16 --json "$out/tensors-heavy.json" --md "$out/tensors-heavy.md" ;;
    stats-tests) step stats-tests stats-tests.log "$tests" --gtest_filter='*Statistic*:*EmptyInputsGive*:*TypedSynchronous*:-*Large*' ;;
    repro)  # issue 14: same bits as the CPU at every grid, block size and offset; then the cost
      step repro-tests repro-tests.log "$tests" --gtest_filter='*Reproducible*:*OrderFree*:-*Large*'
      for t in f32 f64 f16 bf16; do
        step "repro-sweep $t" "repro-sweep-$t.log" "$cli" sweep --from 10 --to 30 --op sum,dot --dtype "$t" --rungs none --determinism gpu_to_gpu --json "$out/repro-sweep-$t.json"
      done ;;
    repro-stats)  # issue 14, statistics: same bits as the CPU, then var, norm (ord 2) and logsumexp
      # in the gpu_to_gpu mode beside the default at 2^24, 2^27 and 2^30, f32 and f64, one run
      step repro-stats-tests repro-stats-tests.log "$tests" --gtest_filter='*ReproducibleGpu*Statistic*:*ReproducibleFormsWithoutAnOrderYetThrow*'
      step repro-stats-sweep repro-stats-sweep.log "$cli" sweep --from 24 --to 30 --step 3 --op var,norm,logsumexp --dtype f32,f64 --rungs none --no-cub --determinism gpu_to_gpu --json "$out/repro-stats-sweep.json" ;;
    repro-segments)  # issue 14 along rows and over segments: the same bits as the CPU per segment,
      # then both modes side by side (sum and dot of f32 and f64 at 2^27 elements; statistics rows)
      step repro-segments-tests repro-segments-tests.log "$tests" --gtest_filter='*ReproducibleSegment*:*ReproducibleFormsWithoutAnOrderYetThrow*'
      for a in "--shape 16777216x8 --axis 1" "--shape 4194304x32 --axis 1" "--shape 524288x256 --axis 1" \
               "--shape 131072x1024 --axis 1" "--shape 32768x4096 --axis 1" "--shape 128x1048576 --axis 1" \
               "--segments ragged:heavy:2097152:64" "--segments ragged:uniform:1048576:256" \
               "--segments ragged:heavy:65536:2048"; do
        name=$(echo "$a" | tr -c 'a-z0-9' _)
        step "repro-segments $a" "repro-seg-$name.log" "$cli" bench $a --op sum,dot --dtype f32,f64 --no-cub --determinism gpu_to_gpu --json "$out/repro-seg-$name.json" --md "$out/repro-seg-$name.md"
      done
      step repro-segments-stats repro-seg-stats.log "$cli" bench --shape 131072x1024 --axis 1 --op var,norm,logsumexp --dtype f32,f16 --no-cub --determinism gpu_to_gpu --json "$out/repro-seg-stats.json" --md "$out/repro-seg-stats.md" ;;
    repro-jit-build)  # issue 14: the GPU tests from compute_80 PTX only (80-virtual), in build/jit80
      step repro-jit-build repro-jit-build.log bash -c 'cmake -S . -B build/jit80 -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80-virtual -DREDUCELAB_BUILD_PYTHON=OFF \
        -DCMAKE_PREFIX_PATH="$PWD/.deps" && cmake --build build/jit80 -j "$(nproc)" --target reducelab_gpu_tests &&
        cuobjdump --list-elf build/jit80/tests/reducelab_gpu_tests | head -3; cuobjdump --list-ptx build/jit80/tests/reducelab_gpu_tests | head -3' ;;
    repro-jit)  # the same gpu_to_gpu bits from the sm_90 build and the JIT-compiled compute_80 one
      step repro-jit-sm90 repro-jit-sm90.log env REDUCELAB_REPRO_DUMP="$out/bits-sm90.txt" "$tests" --gtest_filter='*ReproducibleBitsDump*'
      step repro-jit-80 repro-jit-80.log env REDUCELAB_REPRO_DUMP="$out/bits-jit80.txt" build/jit80/tests/reducelab_gpu_tests --gtest_filter='*ReproducibleBitsDump*'
      step repro-jit-compare repro-jit-compare.log bash -c "wc -l '$out/bits-sm90.txt' '$out/bits-jit80.txt' && cmp '$out/bits-sm90.txt' '$out/bits-jit80.txt' && echo same bits" ;;
    tune) step tune tune.log "$tune" ;;
    tune-small) step tune-small tune-small.md "$tune" --small ;;
    sweep) step sweep sweep.log "$cli" sweep --from 10 --to 30 --json "$out/sweep.json" ;;
    sweep-production) step sweep-production sweep-production.log "$cli" sweep --from 10 --to 30 --rungs none --json "$out/sweep-production.json" ;;
    profile) step profile profile.log "$cli" profile --n 2^24 --md "$out/profile.md" --raw-csv "$out/profile.csv" ;;
    sanitize) OUT=$out step sanitize sanitize.log scripts/sanitize.sh "$tests"; cat "$out/sanitize.log" ;;
    axis-tests) step axis-tests axis-tests.log "$tests" --gtest_filter='Segment*:Axis*:-*Large*' ;;
    other-tests) step other-tests other-tests.log "$tests" --gtest_filter='-*Large*:Segment*:Axis*' ;;
    axis-sweep)
      step axis-sweep-rows axis-sweep-rows.log "$cli" sweep --axis-sweep rows --total 2^27 --json "$out/axis-sweep-rows.json"
      step axis-sweep-columns axis-sweep-columns.log "$cli" sweep --axis-sweep columns --total 2^27 --json "$out/axis-sweep-columns.json" ;;
    axis-all-ops)  # every op x type along rows (CUB beside) and along columns (no CUB: 9 ms a call)
      step axis-all-ops-rows axis-all-ops-rows.log "$cli" bench --shape 131072x1024 --axis 1 --op all --dtype all --json "$out/axis-all-ops-rows.json" --md "$out/axis-all-ops-rows.md"
      step axis-all-ops-columns axis-all-ops-columns.log "$cli" bench --shape 32768x4096 --axis 0 --op all --dtype all --no-cub --json "$out/axis-all-ops-columns.json" --md "$out/axis-all-ops-columns.md" ;;
    sanitize-axis)  # memcheck and racecheck over the segmented and axis kernels, f32, 100 s each
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck}; do
        step "sanitize-axis $tool" "sanitize-axis-$tool.log" timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 99 "$tests" --gtest_filter='SegmentFixed/0.*:SegmentRagged/0.EmptySegments*:SegmentRagged/0.DenseTiny*:AxisShapes/0.*:AxisCalls.*'
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitize-axis-$tool.log" | tail -3
      done ;;
    axis-shapes)  # the shapes, f32 sum: rows, columns, a middle axis, ragged, small batches
      for a in "--shape 4194304x32 --axis 1" "--shape 16777216x8 --axis 1" "--shape 32768x4096 --axis 0" \
               "--shape 4194304x32 --axis 0" "--shape 524288x256 --axis 1" "--shape 1024x131072 --axis 0" \
               "--shape 512x256x1024 --axis 1" "--shape 64x1024 --axis 1" "--shape 1024x64 --axis 1" \
               "--shape 131072x1024 --axis 1" "--shape 32768x4096 --axis 1" "--shape 1x134217728 --axis 1" \
               "--shape 512x256x1024 --axis 0,2" "--segments ragged:heavy:2097152:64" \
               "--segments ragged:uniform:1048576:256" "--segments ragged:heavy:65536:2048"; do
        name=$(echo "$a" | tr -c 'a-z0-9' _)
        step "axis-shape $a" "shape-$name.log" "$cli" bench $a --json "$out/shape-$name.json" --md "$out/shape-$name.md"
      done ;;
    python)  # the GPU machine has no network: build against its own scikit-build-core/nanobind
      step python-install python-install.log env CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        python3 -m pip install --no-build-isolation -v . \
        -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90-real -Cbuild-dir=build/python &&
      step python-tests python-tests.log bash -c 'cd python/tests && python3 -m pytest -q -rs .' ;
      step python-bench python-bench.log python3 -m reducelab.bench --json "$out/python-bench.json" ;;
    multigpu-tests)  # issue 15: the sharded reduce (the two-GPU tests skip on one GPU, saying so)
      step multigpu-tests multigpu-tests.log env NCCL_NVLS_ENABLE=0 "$mgtests" ;;
    multigpu-bench)
      step multigpu-bench multigpu-bench.log env NCCL_NVLS_ENABLE=0 "$mgbench" --json "$out/multigpu-bench.json" ;;
    multigpu-examples)
      step multigpu-one-process multigpu-one-process.log env NCCL_NVLS_ENABLE=0 "$mgexamples/reducelab_example_multigpu_one_process"
      ranks=$(nvidia-smi -L | wc -l)
      step multigpu-process-per-gpu multigpu-process-per-gpu.log env NCCL_NVLS_ENABLE=0 bash -c '
        ex=$1; ranks=$2; id=$(mktemp -u /tmp/nccl-id.XXXXXX); pids=()
        for ((q = 0; q < ranks; q++)); do RANK=$q WORLD_SIZE=$ranks NCCL_ID_FILE=$id "$ex" & pids+=($!); done
        rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done; rm -f "$id"; exit $rc' _ \
        "$mgexamples/reducelab_example_multigpu_process_per_gpu" "$ranks" ;;
    python-tests) step python-tests python-tests.log bash -c 'cd python/tests && python3 -m pytest -q -rs .' ;;
    python-bench) step python-bench python-bench.log python3 -m reducelab.bench --json "$out/python-bench.json" ;;
    *) echo "unknown step $s"; exit 2 ;;
  esac
done
echo "== summary =="
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
tar czf "$dest/results.tgz" -C "$out" .
