#!/usr/bin/env bash
# Builds the release preset on the GPU machine, where CLI11 and nlohmann-json are not installed:
# their headers and CMake configs travel in .deps/ (copied from this machine's Debian packages:
# `mkdir -p .deps/include .deps/share/cmake; cp -r /usr/include/{CLI,nlohmann} .deps/include;
# cp -r /usr/share/cmake/{CLI11,nlohmann_json} .deps/share/cmake`), named in the call's carry.
# The copy's git metadata is not the tree's: give the commit it was made from in
# REDUCELAB_COMMIT (e.g. `REDUCELAB_COMMIT=$(git rev-parse --short=12 HEAD)` written into the
# command here), and every results file records it. REDUCELAB_BUILD_TARGETS (e.g.
# "reducelab_gpu_tests reducelab_cli") builds only those targets.
# When .deps/cccl/include exists (a newer CCCL's headers: `pip download --no-deps cuda-cccl`, then
# the wheel's cuda/cccl/headers/include copied there), it is passed as
# -DREDUCELAB_CCCL_INCLUDE=$PWD/.deps/cccl/include, and the segmented bench gets its fixed-size
# CUB baseline next to the toolkit's CUB (src/CMakeLists.txt); otherwise the option is passed
# empty, so a build folder kept from an earlier run drops the baseline too.
set -u -o pipefail
log=${1:-/tmp/device-build.log}
cccl_include=""
[ -d .deps/cccl/include ] && cccl_include="$PWD/.deps/cccl/include"
cmake --preset release -DCMAKE_PREFIX_PATH="$PWD/.deps" -DREDUCELAB_CCCL_INCLUDE="$cccl_include" \
  -DREDUCELAB_COMMIT_OVERRIDE="${REDUCELAB_COMMIT:-}" >"$log" 2>&1 &&
  cmake --build --preset release -j "$(nproc)" ${REDUCELAB_BUILD_TARGETS:+--target $REDUCELAB_BUILD_TARGETS} >>"$log" 2>&1 ||
  { grep -E "error|Error" "$log" | head -40; tail -20 "$log"; exit 1; }
echo "build ok ($(grep -c 'Building' "$log") compile steps)"
