#!/usr/bin/env bash
# compute-sanitizer's four tools over the production tests (and the ladder's warp-synchronous
# rungs under racecheck), on the GPU machine. Prints one line per tool: clean or not.
#   scripts/sanitize.sh path/to/reducelab_gpu_tests
set -u -o pipefail
tests=${1:?usage: scripts/sanitize.sh path/to/reducelab_gpu_tests}
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# Every production op and type at sizes up to 2^20 + 3, errors, 8 streams x 4 threads, graphs;
# the 2^27 and 2^31 sizes are left to the plain test run (they would take hours under the tools).
production='ProductionTest/*.EveryOpSizeAndAlignment:ProductionTest/*.EmptyInput:ProductionTest/*.NaN*:ProductionTest/*.Argmin*:ProductionTest/*.Extreme*:ProductionErrors.*:ProductionStreams.*:SignedZeroTest/*:ArgValueBitsTest/*:RuntimeTypedEntry.*:WorkspaceRelease.*:CombinePartials.*:SegmentFixed/0.*:SegmentRagged/0.*:SegmentNaN/0.*:SegmentCalls.*:SegmentErrors.*:AxisShapes/0.*:AxisShapes/4.*:AxisNaN/0.*:AxisCalls.*:AxisErrors.*'
ladder='EveryRung/LadderTest.MatchesReference/V4_*_1025:EveryRung/LadderTest.MatchesReference/V5_*_4097:EveryRung/LadderTest.MatchesReference/V6_*_65537'
status=0
for tool in memcheck racecheck synccheck initcheck; do
  filter=$production
  # racecheck follows every shared-memory access: one pass over each kernel instantiation is what
  # it needs (the host-thread concurrency test is memcheck's and synccheck's business).
  [ "$tool" = racecheck ] && filter="ProductionTest/*.EveryOpSizeAndAlignment:ProductionTest/*.Argmin*:ProductionErrors.*:ArgValueBitsTest/*:CombinePartials.*:SegmentFixed/0.*:AxisShapes/0.*:$ladder"
  log="$out/sanitize-$tool.log"
  start=$SECONDS
  timeout 280 "$sanitizer" --tool "$tool" --error-exitcode 99 "$tests" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  tests_line=$(grep -E "^\[  (PASSED|FAILED)  \]" "$log" | head -2 | tr '\n' ' ')
  echo "$tool: exit $rc in $((SECONDS - start)) s; ${summary:-no summary}; $tests_line"
  [ $rc -eq 0 ] || status=1
done
exit $status
