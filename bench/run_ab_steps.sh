#!/usr/bin/env bash
# Alternating A/B of two training executables of the same model (two builds
# or two compilations of one ONNX file): runs A B A B ... ROUNDS times,
# STEPS steps each, on the same batches, and prints for every run the load
# average at its start, the step times (from --log-json) and their median,
# then the median of the runs' medians per side and their ratio. On a
# shared machine the alternation spreads the load over both sides; the
# range, not one figure, is the result. A benchmark, never a test.
#
#   bash bench/run_ab_steps.sh EXE_A EXE_B [ROUNDS] [STEPS]    (2 rounds, 4 steps)
#
# Environment (defaults in brackets):
#   THREADS    MEGAGRAPH_NUM_THREADS of both                           [2]
#   DATA       --data of both [synthetic:sbm,nodes=16384,classes=8,features=16,seed=1]
#   NICE       run both under `nice -n NICE` (empty: not)              [-10]
#   OUT        folder of the JSON logs                     [a fresh mktemp -d]
#   EXTRA_A, EXTRA_B  environment assignments for one side (e.g.
#              MEGAGRAPH_ATTENTION_BWD=phased), space separated         [none]
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
A=$1 B=$2 ROUNDS=${3:-2} STEPS=${4:-4}
THREADS=${THREADS:-2}
DATA=${DATA:-synthetic:sbm,nodes=16384,classes=8,features=16,seed=1}
NICE=${NICE--10}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export MEGAGRAPH_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
PREFIX=()
[ -n "$NICE" ] && PREFIX=(nice -n "$NICE")

one() { # one SIDE EXE ROUND EXTRA
  local side=$1 exe=$2 round=$3 extra=$4 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  echo "$load" >"$OUT/$side$round.load"
  # shellcheck disable=SC2086
  env $extra "${PREFIX[@]}" "$exe" --mode train --data "$DATA" \
    --steps "$STEPS" --max-distance 8 --partition greedy \
    --log-json "$OUT/$side$round.jsonl" >"$OUT/$side$round.log" 2>&1
}
echo "A: $A ${EXTRA_A:-}"
echo "B: $B ${EXTRA_B:-}"
echo "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
  one A "$A" "$r" "${EXTRA_A:-}"
  one B "$B" "$r" "${EXTRA_B:-}"
done
echo "end $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uptime)"
OUT=$OUT ROUNDS=$ROUNDS /usr/bin/python3 - <<'PY'
import json, os, statistics
out, rounds = os.environ["OUT"], int(os.environ["ROUNDS"])
print("| run | load (1 min) at start | step times s | median s/step | loss last step |")
print("|---|---:|---|---:|---:|")
med = {"A": [], "B": []}
for r in range(1, rounds + 1):
    for side in "AB":
        recs = [json.loads(l) for l in open(f"{out}/{side}{r}.jsonl")]
        t = [x["step_time_s"] for x in recs]
        m = statistics.median(t)
        med[side].append(m)
        load = open(f"{out}/{side}{r}.load").read().strip()
        print(f"| {side}{r} | {load} | {' '.join(f'{x:.2f}' for x in t)} | "
              f"{m:.2f} | {recs[-1]['loss']:.5f} |")
a, b = statistics.median(med["A"]), statistics.median(med["B"])
print(f"\nmedian of run medians: A {a:.2f} s, B {b:.2f} s, B / A = {b / a:.2f}")
PY
