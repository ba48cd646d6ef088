#!/usr/bin/env bash
# Inference, interleaved: per (S, B) and round, MegaGraph's compiled forward
# (narrow-head attention), the same binary with MEGAGRAPH_ATTENTION_SMALL_HEAD=0
# (blockwise attention), and PyTorch 2.15 eager SDPA under no_grad, one after
# the other; each run does 4 forwards on the first training batch. Reported:
# MegaGraph min ms of its 4 (--repeat 4), PyTorch min of forwards 2..4 of
# every round so far (its --log-json appends). A benchmark, never a test.
#
#   W=WORK bash bench/run_infer_interleaved_ab.sh s2048b1 s4096b2 ...
#   (folders of WORK, as run_torch2_bench.sh names them: s<S>b<B>)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${W:?set W to the WORK folder of a run_torch2_bench.sh run (INFER=1)}
ROUNDS=${ROUNDS:-2}
export MEGAGRAPH_NUM_THREADS=2 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
# OpenBLAS's own CPU detection, as in bench/bench_common.sh.
[ "${BLAS_CORE:-}" = keep ] || unset OPENBLAS_CORETYPE
for D in "$@"; do
  IN=()
  for n in x in_degree out_degree spd; do IN+=(--input "$n=$W/$D/batches/step1/$n.npy"); done
  rm -f "$W/$D/il-torch.jsonl"
  for r in $(seq "$ROUNDS"); do
    for side in narrow blockwise torch; do
      # A settled machine for each side (see settle in bench_common.sh).
      sleep "${SETTLE:-5}"
      l0=$(cut -d' ' -f1 /proc/loadavg)
      case $side in
      narrow) ms=$("$W/$D/graphormer_infer" --mode infer "${IN[@]}" --repeat 4 --quiet --output-dir "$W/$D/il-out" 2>&1 | tail -1 | sed -E 's/.*min ([0-9.]+) ms.*/\1/') ;;
      blockwise) ms=$(env MEGAGRAPH_ATTENTION_SMALL_HEAD=0 "$W/$D/graphormer_infer" --mode infer "${IN[@]}" --repeat 4 --quiet --output-dir "$W/$D/il-out" 2>&1 | tail -1 | sed -E 's/.*min ([0-9.]+) ms.*/\1/') ;;
      torch) /opt/torch-venv/bin/python bench/torch2_graphormer_train.py --model-dir "$W/$D" --batches "$W/$D/batches" --threads 2 --lr 1e-3 --log-json "$W/$D/il-torch.jsonl" --steps 4 --attention sdpa --infer >/dev/null 2>&1
             ms=$(/usr/bin/python3 -c "import json; print('%.1f' % (1000 * min(json.loads(l)['step_time_s'] for l in open('$W/$D/il-torch.jsonl') if json.loads(l)['step'] > 1)))") ;;
      esac
      echo "$D round $r $side $ms ms load $l0-$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
