#!/usr/bin/env bash
# Plan search benchmark: search time over devices (8 .. 1024) and
# layers (12 .. 96), and plain dp versus the searched plan's per-device
# memory for models dp does not fit (H100 profile). Then, on this machine,
# the E2E plan_accuracy and plan_search_train checks (4 ranks, a budget dp=4 does not fit):
# predicted and measured memory of dp=4 and of the searched plan.
# usage: bench/run_search_bench.sh [BUILD_DIR] [OUT.md]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${1:-build}
OUT=${2:-bench/results/$(date -u +%F)-plan-search.md}
ninja -C "$BUILD" -j2 MegaGraphPlanSearchBench megagraph-compile megagraph_rt \
  > /dev/null
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
{
  echo "# Plan search benchmark ($(date -u +%F), $(nproc) cores)"
  echo
  echo "Command: \`bench/run_search_bench.sh $BUILD\`"
  echo
  "$BUILD/test/unit/MegaGraphPlanSearchBench" 2>/dev/null ||
    "$BUILD/bin/MegaGraphPlanSearchBench"
  echo
  echo "## On this machine: model accuracy under mpirun -np 4 (cpu-here profile)"
  echo
  echo '```'
  PATH="$BUILD/bin:$PATH" /usr/bin/python3 test/E2E/plan_accuracy_check.py \
    megagraph-compile "$WORK/accuracy" 2>/dev/null
  echo '```'
  echo
  echo "## On this machine: 4 ranks, a budget plain dp does not fit"
  echo
  echo '```'
  PATH="$BUILD/bin:$PATH" /usr/bin/python3 test/E2E/plan_search_train_check.py \
    megagraph-compile "$WORK/train" 2>/dev/null | grep -v '^  *scores'
  echo '```'
} > "$OUT"
echo "wrote $OUT"
