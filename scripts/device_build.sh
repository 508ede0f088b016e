#!/usr/bin/env bash
# Builds the release preset on the GPU machine, where CLI11 and nlohmann-json are not installed:
# their headers and CMake configs travel in .deps/ (copied from this machine's Debian packages:
# `mkdir -p .deps/include .deps/share/cmake; cp -r /usr/include/{CLI,nlohmann} .deps/include;
# cp -r /usr/share/cmake/{CLI11,nlohmann_json} .deps/share/cmake`), named in the call's carry.
set -u -o pipefail
log=${1:-/tmp/device-build.log}
cmake --preset release -DCMAKE_PREFIX_PATH="$PWD/.deps" >"$log" 2>&1 &&
  cmake --build --preset release -j "$(nproc)" >>"$log" 2>&1 ||
  { grep -E "error|Error" "$log" | head -40; tail -20 "$log"; exit 1; }
echo "build ok ($(grep -c 'Building' "$log") compile steps)"
