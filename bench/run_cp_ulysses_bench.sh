#!/usr/bin/env bash
# Bytes per step per rank of the three context-parallel modes, side by
# side: all-gather (K, V gathered, dK, dV reduce-scattered), ring (K, V
# blocks around the ring) and Ulysses (q, k, v, dO and the bias to heads by
# all-to-all, the results back). Two models of test/E2E (2 layers, D=32,
# H=4), trained for STEPS steps with SGD on a synthetic SBM under
# `mpirun -np CP`, global batch B:
#   graphormer  Graphormer's spatial bias read in place: each rank keeps
#               [B, S/CP, S] int16 distances; Ulysses all-gathers them per
#               attention (all S query rows of its heads)
#   mha         nn.TransformerEncoder with a dense ALiBi-style float bias
#               [B, H, S, S]: Ulysses moves its [B, H, S/CP, S] rows to
#               [B, H/CP, S, S] every layer, and the gradient back
# comm_bytes is what the communication runtime counts per step and rank
# (mgrt_comm_bytes_sent: ring-algorithm volumes of the collectives, what an
# all-to-all sends to the other ranks): exact and the same every step;
# it includes the dp x cp gradient all-reduce, the same for all modes.
# Step times on a shared machine are noisy; the bytes are not.
# Writes bench/results/<date>-cp-ulysses.md.
#
# usage: bash bench/run_cp_ulysses_bench.sh [BUILD_DIR]
#   env: SIZES="256 1024" CP=4 B=2 STEPS=3
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
COMPILE=$BUILD/bin/megagraph-compile
SIZES=${SIZES:-"256 1024"}
CP=${CP:-4}
B=${B:-2}
STEPS=${STEPS:-3}
WORK=${WORK:-$BUILD/bench-work/cp-ulysses}
OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y-%m-%d)-cp-ulysses.md}
PY=/usr/bin/python3
MPI=(mpirun --oversubscribe --mca btl self,vader)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
mkdir -p "$WORK"

# export MODEL S -> $WORK/MODEL_S.onnx (batch B, same weights for every S)
export_model() {
  local m=$1 s=$2 f=$WORK/$1_$2.onnx
  [ -f "$f" ] || ROOT=$ROOT $PY - "$m" "$B" "$s" "$f" <<'PYEOF' >/dev/null 2>&1
import os, sys, torch
sys.path.insert(0, os.environ["ROOT"] + "/test/E2E")
import train_graphormer_check as tg
import train_cp_check as tcc
m, b, s, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
if m == "mha":
    model = tcc.MhaGT()
    inputs = (torch.randn(b, s, tg.F), torch.zeros(b, s, s, dtype=torch.long))
    names = ["x", "spd"]
else:
    model = tg.Graphormer()
    inputs = (torch.randn(b, s, tg.F), torch.zeros(b, s, dtype=torch.long),
              torch.zeros(b, s, dtype=torch.long),
              torch.zeros(b, s, s, dtype=torch.long))
    names = ["x", "in_degree", "out_degree", "spd"]
torch.onnx.export(model, inputs, path, input_names=names,
                  output_names=["logits"], opset_version=17)
PYEOF
  echo "$f"
}

# run MODEL S MODE -> prints "bytes_max bytes_min step_s" or "FAILED(rc)"
run_cfg() {
  local m=$1 s=$2 mode=$3 onnx exe log
  onnx=$(export_model "$m" "$s")
  exe=$WORK/${m}_${s}_$mode log=$WORK/${m}_${s}_$mode.jsonl
  [ -x "$exe" ] || $COMPILE "$onnx" --train --optimizer sgd --lr 0.01 \
      --plan "cp=$CP,cp_mode=$mode" --emit=exe -o "$exe" >/dev/null 2>&1
  rm -f "$log"
  local rc=0
  "${MPI[@]}" -np "$CP" "$exe" --mode train --quiet --steps "$STEPS" \
      --data "synthetic:sbm,nodes=$((8 * s)),classes=8,features=16,signal=3,seed=3" \
      --log-json "$log" >/dev/null 2>"$log.err" || rc=$?
  if [ "$rc" != 0 ]; then echo "FAILED($rc)"; return; fi
  $PY - "$log" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
last = recs[-1]["comm_bytes"]
times = [r["step_time_s"] for r in recs[1:]] or [recs[0]["step_time_s"]]
print(f"{max(last)} {min(last)} {sum(times) / len(times):.3f}")
PYEOF
}

{
  echo "# Context parallelism: all-gather vs ring vs Ulysses, bytes per step ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $CP MPI ranks oversubscribed on them."
  echo "Load before the runs (\`uptime\`): $(uptime)"
  echo "Models: test/E2E Graphormer-style (spatial bias read in place) and mha (stock nn.TransformerEncoder, dense [B,H,S,S] ALiBi-style bias); 2 layers, D=32, H=4; global batch $B, SGD, $STEPS steps."
  echo "Command: \`SIZES=\"$SIZES\" CP=$CP B=$B STEPS=$STEPS bash bench/run_cp_ulysses_bench.sh\`"
  echo
  echo "comm_bytes per step per rank (max / min over the $CP ranks; the same every step), step time (mean of steps 2..$STEPS, noisy on shared cores):"
  echo
  echo "| model | S | cp_mode | bytes per step per rank (max / min) | vs allgather | step s |"
  echo "|---|---|---|---|---|---|"
} > "$OUT"
for m in graphormer mha; do
  for s in $SIZES; do
    ag=""
    for mode in allgather ring ulysses; do
      r=$(run_cfg "$m" "$s" "$mode")
      echo "$m S=$s $mode: $r" >&2
      set -- $r
      case $1 in FAILED*) echo "| $m | $s | $mode | $1 | | |" >> "$OUT"; continue ;; esac
      [ -z "$ag" ] && ag=$1
      ratio=$($PY -c "print(f'{$1 / $ag:.2f}x')")
      echo "| $m | $s | $mode | $1 / $2 | $ratio | $3 |" >> "$OUT"
    done
  done
done
echo "Load after the runs (\`uptime\`): $(uptime)" >> "$OUT"
echo "wrote $OUT" >&2
