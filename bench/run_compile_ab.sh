#!/usr/bin/env bash
# Compile time of the Graphormer-style bench model's training step (4 pre-LN
# layers, D = 128, AdamW), A/B: two megagraph-compile binaries run
# alternately ROUNDS times in one invocation, reporting each run's CPU time
# (user + system, which unlike the elapsed time does not grow when other
# jobs share the cores) and elapsed time, then one per-phase report
# (--progress) of each. A benchmark, never a test.
#
#   bash bench/run_compile_ab.sh OLD_COMPILER NEW_COMPILER [MODEL.onnx]
#
# MODEL defaults to an export of bench/graphormer_bench.py --train
# --nodes 1024 --batch 2 in $WORK (compile time does not depend on S).
# Environment: ROUNDS [3], WORK [/tmp/megagraph-compile-ab].
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=$1 NEW=$2
WORK=${WORK:-/tmp/megagraph-compile-ab}
ROUNDS=${ROUNDS:-3}
mkdir -p "$WORK"
MODEL=${3:-$WORK/model/model.onnx}
if [ ! -f "$MODEL" ]; then
  /usr/bin/python3 "$ROOT/bench/graphormer_bench.py" --train --nodes 1024 \
    --batch 2 --out "$WORK/model" >"$WORK/export.log"
fi
ARGS=(--train --optimizer adamw --lr 1e-3)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load:$(uptime | sed 's/.*load average://')"
echo "| run | compiler | CPU s (user+sys) | elapsed s |"
echo "|---:|---|---:|---:|"
for i in $(seq "$ROUNDS"); do
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    /usr/bin/time -f "%U %S %e" -o "$WORK/time.txt" "$bin" "$MODEL" \
      "${ARGS[@]}" --emit=obj -o "$WORK/$side.o" >/dev/null 2>&1
    read -r user sys wall <"$WORK/time.txt"
    echo "| $i | $side | $(echo "$user + $sys" | bc) | $wall |"
  done
done
for side in old new; do
  bin=$OLD; [ "$side" = new ] && bin=$NEW
  echo; echo "$side: $bin --progress (emit=exe)"
  "$bin" "$MODEL" "${ARGS[@]}" --emit=exe -o "$WORK/$side.exe" --progress 2>&1 |
    grep '^megagraph-compile: [a-zA-Z]* *[0-9]' | sed 's/^/    /'
done
echo "load after:$(uptime | sed 's/.*load average://')"
