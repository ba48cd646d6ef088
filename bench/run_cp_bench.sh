#!/usr/bin/env bash
# Context parallelism vs data parallelism, side by side in one run:
# the Graphormer-style model of test/E2E (spatial bias [B,H,S,S] from the
# SPD, degree embeddings, 2 layers, D=32, H=4) trained for STEPS steps with
# SGD on a synthetic SBM under `mpirun -np 4`:
#   dp=4          B=2 per rank (global batch 8)
#   cp=4          B=8, S/4 rows per rank (global batch 8), allgather and ring
#   dp=2 x cp=2   B=4, S/2 rows per rank (global batch 8)
# (B >= 2 per rank: a B=1 export is traced differently by PyTorch and not
# raised to gt.degree_embedding.)
# per-rank peak tracked memory (mgrt_peak_bytes, max over ranks and steps)
# and the mean step time (steps 2..STEPS). Then the largest S in SIZES_CAP
# that trains under a per-rank cap (--device-memory CAP) with global batch 8
# for dp=4 vs cp=4 and with global batch 2 for one process vs cp=4.
# Writes bench/results/<date>-cpu-cp.md.
#
# usage: bash bench/run_cp_bench.sh [BUILD_DIR]
#   env: SIZES="1024 2048" STEPS=3 CAP=256MiB SIZES_CAP="512 1024 2048 4096"
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-comm}
COMPILE=$BUILD/bin/megagraph-compile
SIZES=${SIZES:-"1024 2048"}
STEPS=${STEPS:-3}
CAP=${CAP:-256MiB}
SIZES_CAP=${SIZES_CAP:-"512 1024 2048 4096"}
WORK=${WORK:-$BUILD/bench-work/cp}
OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y-%m-%d)-cpu-cp.md}
PY=/usr/bin/python3
MPI=(mpirun --oversubscribe --mca btl self,vader)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
mkdir -p "$WORK"

# export B S -> $WORK/g_B_S.onnx (same weights for every shape)
export_model() {
  local b=$1 s=$2 f=$WORK/g_$1_$2.onnx
  [ -f "$f" ] || ROOT=$ROOT $PY - "$b" "$s" "$f" <<'PYEOF' >/dev/null 2>&1
import os, sys, torch
sys.path.insert(0, os.environ["ROOT"] + "/test/E2E")
import train_graphormer_check as tg
b, s, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
m = tg.Graphormer()
inputs = (torch.randn(b, s, tg.F), torch.zeros(b, s, dtype=torch.long),
          torch.zeros(b, s, dtype=torch.long),
          torch.zeros(b, s, s, dtype=torch.long))
torch.onnx.export(m, inputs, path, input_names=["x", "in_degree", "out_degree", "spd"],
                  output_names=["logits"], opset_version=17)
PYEOF
  echo "$f"
}

# run NAME B S PLAN NP [CAP] -> prints "peak_MiB step_s" or "FAILED(rc)"
run_cfg() {
  local name=$1 b=$2 s=$3 plan=$4 np=$5 cap=${6:-}
  local onnx exe=$WORK/${name}_$s log=$WORK/${name}_$s${cap:+_cap}.jsonl
  onnx=$(export_model "$b" "$s")
  [ -x "$exe" ] || $COMPILE "$onnx" --train --optimizer sgd --lr 0.01 \
      ${plan:+--plan "$plan"} --emit=exe -o "$exe" >/dev/null
  rm -f "$log"
  local nodes=$((8 * s)) prefix=()
  [ "$np" -gt 1 ] && prefix=("${MPI[@]}" -np "$np")
  local rc=0
  "${prefix[@]}" "$exe" --mode train --quiet --steps "$STEPS" \
      --data "synthetic:sbm,nodes=$nodes,classes=8,features=16,signal=3,seed=3" \
      ${cap:+--device-memory "$cap"} --log-json "$log" >/dev/null 2>"$log.err" || rc=$?
  if [ "$rc" != 0 ]; then echo "FAILED($rc)"; return; fi
  $PY - "$log" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
peak = max(max(r["peak_bytes"]) for r in recs) / 2**20
times = [r["step_time_s"] for r in recs[1:]] or [recs[0]["step_time_s"]]
print(f"{peak:.1f} {sum(times) / len(times):.3f}")
PYEOF
}

{
  echo "# Context parallelism vs data parallelism, CPU ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), 4 MPI ranks oversubscribed on them."
  echo "Model: test/E2E Graphormer-style (2 layers, D=32, H=4, spatial bias [B,H,S,S] from the SPD, degree embeddings), SGD, $STEPS steps."
  echo "Command: \`SIZES=\"$SIZES\" STEPS=$STEPS CAP=$CAP SIZES_CAP=\"$SIZES_CAP\" bash bench/run_cp_bench.sh\`"
  echo
  echo "## Global batch 8 on 4 ranks"
  echo
  echo "| S | plan | rows per rank | B per rank | peak MiB per rank | step s |"
  echo "|---|---|---|---|---|---|"
} > "$OUT"
for s in $SIZES; do
  for cfg in "dp4 2 dp=4 4 $s" "cp4 8 cp=4 4 $((s / 4))" \
             "cp4ring 8 cp=4,cp_mode=ring 4 $((s / 4))" \
             "dp2cp2 4 dp=2,cp=2 4 $((s / 2))"; do
    set -- $cfg
    r=$(run_cfg "$1" "$2" "$s" "$3" "$4")
    echo "S=$s $3: $r" >&2
    set -- $cfg $r
    echo "| $s | $3 | $5 | $2 | ${6:-FAILED} | ${7:-} |" >> "$OUT"
  done
done
{
  echo
  echo "## Largest S under --device-memory $CAP per rank"
  echo
  echo "| plan | global batch | ranks | S that trained (peak MiB per rank) | first S that did not |"
  echo "|---|---|---|---|---|"
} >> "$OUT"
# name B plan ranks global-batch
for cfg in "single 2 - 1 2" "cp4g2 2 cp=4 4 2" "dp4 2 dp=4 4 8" "cp4 8 cp=4 4 8"; do
  set -- $cfg
  name=$1 b=$2 plan=$3 np=$4 gb=$5
  [ "$plan" = - ] && plan=""
  ok="-" bad="-"
  for s in $SIZES_CAP; do
    r=$(run_cfg "$name" "$b" "$s" "$plan" "$np" "$CAP")
    echo "cap $name S=$s: $r" >&2
    case $r in FAILED*) bad="$s ($r)"; break ;; esac
    ok="$s (${r%% *})"
  done
  echo "| ${plan:-one process} | $gb | $np | $ok | $bad |" >> "$OUT"
done
echo "wrote $OUT" >&2
