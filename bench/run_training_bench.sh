#!/usr/bin/env bash
# CPU training benchmark: one training step (forward, loss, backward,
# optimizer update) of the Graphormer-style bench model compiled by MegaGraph
# (megagraph-compile --train, run with --mode train) against the same step in
# LibTorch (bench/libtorch_graphormer_train.cpp: autograd + torch::optim),
# side by side in one run: same model and initial weights, same S and batch,
# same optimizer and learning rate, same data and batch order, same threads.
# A benchmark, never a test.
#
#   bash bench/run_training_bench.sh [S ...]          (default: 1024 2048 4096)
#
# Environment (defaults in brackets):
#   BUILD_DIR  build with megagraph-compile, megagraph_rt and
#              megagraph-bench-libtorch-train                      [build-bench]
#   WORK       scratch dir for models, logs           [$BUILD_DIR/bench-train-work]
#   THREADS    threads for both                                              [2]
#   BATCH      B, sequences per step (1 works too)                         [2]
#   WARMUP     untimed first steps of each run                               [2]
#   STEPS      timed steps after them (median reported)                     [10]
#   OPTIMIZER  adamw | sgd (AdamW: betas 0.9 / 0.999, eps 1e-8, no weight
#              decay, on both sides)                                     [adamw]
#   LR         learning rate                      [1e-3 for adamw, 0.01 for sgd]
#   DATA       --data of both  [synthetic:sbm,nodes=16384,classes=8,features=16,seed=1]
#   LOSS_TOL   max relative loss difference per step, MegaGraph vs LibTorch,
#              before the run counts as "not the same training"        [1e-3]
#   RESULTS    markdown file      [bench/results/<date>-cpu-training.md]
#   REUSE      1: keep an already exported model of the same size and batch,
#              and its executable if compiled with the same flags          [0]
#   NICE       run both binaries under `nice -n NICE` (e.g. -10 as root on
#              a machine shared with other jobs)                        [unset]
#   OMP_WAIT_POLICY  LibTorch's OpenMP threads (libgomp) between parallel
#              regions. PASSIVE: they sleep. With ACTIVE or unset they spin,
#              and when the cores are shared with other jobs every barrier
#              waits for a descheduled thread: on this 2-core machine under
#              load a step at S=256 took 2.6 s (ACTIVE) vs 0.19 s (PASSIVE).
#              Set it to ACTIVE (or "default" to leave it unset) on a quiet
#              machine                                               [PASSIVE]
#
# Per S: export the training variant (bench/graphormer_bench.py --train: 4
# layers, D=128, H=8, FFN 256, B=BATCH, float SBM features through a Linear
# encoder), compile it with --train, then run the compiled binary and the
# LibTorch baseline for WARMUP + STEPS steps each, one after the other, under
# /usr/bin/time -v. Both log one JSON line per step; the step time is the
# median of the STEPS steps after the warm-up (batch building not timed).
# Memory: whole-process peak RSS (/usr/bin/time -v) for both, plus the
# runtime-tracked peak of a MegaGraph step (mgrt_peak_bytes, reset at each
# step: activations, gradients, scratch, inputs, outputs) and LibTorch's
# RSS right before its first step (weights, data, libraries).
# Both see the same batch at every step, so their loss curves must agree:
# the script prints the largest relative difference and exits 1 (after
# writing RESULTS) if it exceeds LOSS_TOL or a run fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# BUILD_DIR, THREADS, NICE, DATE, PY, thread environment, log, run
source bench/bench_common.sh
WORK=${WORK:-$BUILD_DIR/bench-train-work}
BATCH=${BATCH:-2}
WARMUP=${WARMUP:-2}
STEPS=${STEPS:-10}
OPTIMIZER=${OPTIMIZER:-adamw}
if [ "$OPTIMIZER" = adamw ]; then LR=${LR:-1e-3}; else LR=${LR:-0.01}; fi
DATA=${DATA:-synthetic:sbm,nodes=16384,classes=8,features=16,seed=1}
LOSS_TOL=${LOSS_TOL:-1e-3}
REUSE=${REUSE:-0}
RESULTS=${RESULTS:-$ROOT/bench/results/$DATE-cpu-training.md}
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1024 2048 4096)
TOTAL=$((WARMUP + STEPS))
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
if [ "$OMP_WAIT_POLICY" = default ]; then
  unset OMP_WAIT_POLICY
else
  export OMP_WAIT_POLICY
fi

COMPILE=$BUILD_DIR/bin/megagraph-compile
LIBTORCH=$BUILD_DIR/bin/megagraph-bench-libtorch-train
BUILD_TARGETS="megagraph-compile megagraph_rt megagraph-bench-libtorch-train"
require_tools "$COMPILE" "$LIBTORCH" /usr/bin/time
mkdir -p "$WORK" "$(dirname "$RESULTS")"
read -r -a PREFIX <<<"$(nice_prefix)"

START=$(date '+%Y-%m-%d %H:%M:%S %Z')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for S in "${SIZES[@]}"; do
  D=$WORK/s$S
  if [ "$REUSE" != 1 ] || [ ! -f "$D/config.json" ] ||
    ! grep -q "\"batch\": $BATCH," "$D/config.json"; then
    log "S=$S: export"
    rm -rf "$D"
    run $PY bench/graphormer_bench.py --train --nodes "$S" --batch "$BATCH" \
      --out "$D" \
      >"$WORK/s$S.export.log"
  fi
  EXE=$D/graphormer_train_s$S
  FLAGS="--train --optimizer $OPTIMIZER --lr $LR"
  if [ "$REUSE" != 1 ] || [ ! -x "$EXE" ] ||
    [ "$(cat "$D/compile_flags.txt" 2>/dev/null)" != "$FLAGS" ]; then
    log "S=$S: compile ($FLAGS)"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    run "$COMPILE" "$D/model.onnx" $FLAGS --emit=exe -o "$EXE"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.1f\n", $2 - $1}' >"$D/compile_s.txt"
    echo "$FLAGS" >"$D/compile_flags.txt"
  fi

  # The LibTorch side cuts the graph into sequences with the runtime's greedy
  # partitioner; a driver that can also use METIS is told to do the same.
  EXTRA=()
  "$EXE" --help 2>&1 | grep -q -- '--partition' && EXTRA=(--partition greedy)
  rm -f "$D/megagraph.jsonl" "$D/libtorch.jsonl"

  log "S=$S: MegaGraph ($TOTAL steps)"
  run "${PREFIX[@]}" /usr/bin/time -v -o "$D/megagraph.time" "$EXE" \
    --mode train --data "$DATA" --steps "$TOTAL" --max-distance 8 \
    --log-json "$D/megagraph.jsonl" "${EXTRA[@]}" >"$D/megagraph.log" ||
    echo "bench: MegaGraph failed at S=$S (status $?); its row is marked FAILED"
  tail -1 "$D/megagraph.log"

  log "S=$S: LibTorch ($TOTAL steps)"
  run "${PREFIX[@]}" /usr/bin/time -v -o "$D/libtorch.time" "$LIBTORCH" \
    --model-dir "$D" --data "$DATA" --steps "$TOTAL" --max-distance 8 \
    --optimizer "$OPTIMIZER" --lr "$LR" --threads "$THREADS" \
    --log-json "$D/libtorch.jsonl" >"$D/libtorch.log" ||
    echo "bench: LibTorch failed at S=$S (status $?); its row is marked FAILED"
  tail -1 "$D/libtorch.log"
done
END=$(date '+%Y-%m-%d %H:%M:%S %Z')
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- tables + results file --------------------------------------------------
CMDS_FILE=$WORK/commands.txt
printf '%s\n' "${COMMANDS[@]}" >"$CMDS_FILE"
export OMP_WAIT_LIST=${OMP_WAIT_POLICY:-unset}
export ROOT WORK THREADS WARMUP STEPS OPTIMIZER LR DATA LOSS_TOL RESULTS START \
  END LOAD_BEFORE LOAD_AFTER CMDS_FILE BUILD_DIR NICE
export SIZES_LIST="${SIZES[*]}"
PYTHONPATH=$ROOT/bench $PY - <<'EOF'
import json, os, statistics, sys
from bench_report import gnu_time, machine_lines

E = os.environ
work, sizes = E["WORK"], [int(s) for s in E["SIZES_LIST"].split()]
warmup, steps, tol = int(E["WARMUP"]), int(E["STEPS"]), float(E["LOSS_TOL"])
MiB = 2.0**20

def records(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []

rows, ok = [], True
for s in sizes:
    d = os.path.join(work, f"s{s}")
    mg, lt = records(f"{d}/megagraph.jsonl"), records(f"{d}/libtorch.jsonl")
    total = warmup + steps
    complete = len(mg) == total and len(lt) == total and all(
        r["loss"] is not None for r in mg + lt)
    r = dict(S=s, complete=complete, mg_n=len(mg), lt_n=len(lt),
             compile_s=float(open(f"{d}/compile_s.txt").read()))
    if complete:
        mt = [x["step_time_s"] * 1e3 for x in mg[warmup:]]
        lt_t = [x["step_time_s"] * 1e3 for x in lt[warmup:]]
        rel = [abs(a["loss"] - b["loss"]) / max(abs(b["loss"]), 1e-12)
               for a, b in zip(mg, lt)]
        r.update(mg_med=statistics.median(mt), mg_min=min(mt), mg_max=max(mt),
                 lt_med=statistics.median(lt_t), lt_min=min(lt_t),
                 lt_max=max(lt_t),
                 mg_tracked=max(x["peak_bytes"][0] for x in mg) / MiB,
                 lt_before=float(open(f"{d}/libtorch.log").read()
                                 .rsplit("before the first step ", 1)[1]
                                 .split(" MiB")[0]),
                 loss_rel=max(rel), loss_first=(mg[0]["loss"], lt[0]["loss"]),
                 loss_last=(mg[-1]["loss"], lt[-1]["loss"]),
                 mg_time=gnu_time(f"{d}/megagraph.time"),
                 lt_time=gnu_time(f"{d}/libtorch.time"))
        ok &= r["loss_rel"] <= tol
    ok &= complete
    rows.append(r)

def main_table(rs):
    out = ["| S | MegaGraph ms/step | LibTorch ms/step | speedup | "
           "MegaGraph peak RSS MiB (runtime-tracked step peak) | "
           "LibTorch peak RSS MiB (RSS before 1st step) | memory ratio | "
           "max rel loss diff |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rs:
        if not r["complete"]:
            out.append(f"| {r['S']} | **FAILED** ({r['mg_n']} MegaGraph, "
                       f"{r['lt_n']} LibTorch steps logged) | | | | | | |")
            continue
        g, t = r["mg_time"], r["lt_time"]
        flag = "" if r["loss_rel"] <= tol else " **MISMATCH**"
        out.append(
            f"| {r['S']} | {r['mg_med']:.0f} | {r['lt_med']:.0f} | "
            f"{r['lt_med'] / r['mg_med']:.2f}x | {g['rss']:.0f} "
            f"({r['mg_tracked']:.0f}) | {t['rss']:.0f} ({r['lt_before']:.0f}) | "
            f"{g['rss'] / t['rss']:.2f} | {r['loss_rel']:.1e}{flag} |")
    return out

def detail_table(rs):
    out = ["| S | MegaGraph min / max ms | LibTorch min / max ms | "
           "loss step 1 MegaGraph / LibTorch | loss last step | "
           "MegaGraph user / sys s, minor faults | "
           "LibTorch user / sys s, minor faults | megagraph-compile s |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rs:
        if not r["complete"]:
            continue
        g, t = r["mg_time"], r["lt_time"]
        out.append(
            f"| {r['S']} | {r['mg_min']:.0f} / {r['mg_max']:.0f} | "
            f"{r['lt_min']:.0f} / {r['lt_max']:.0f} | "
            f"{r['loss_first'][0]:.5f} / {r['loss_first'][1]:.5f} | "
            f"{r['loss_last'][0]:.5f} / {r['loss_last'][1]:.5f} | "
            f"{g['user']:.1f} / {g['sys']:.1f}, {g['faults'] / 1e3:.0f}k | "
            f"{t['user']:.1f} / {t['sys']:.1f}, {t['faults'] / 1e3:.0f}k | "
            f"{r['compile_s']:.1f} |")
    return out

cfg = json.load(open(os.path.join(work, f"s{sizes[0]}", "config.json")))
machine = machine_lines(E["ROOT"], E["START"], E["END"], E["LOAD_BEFORE"],
                        E["LOAD_AFTER"], E["NICE"])
cmds = open(E["CMDS_FILE"]).read().strip()
nice = f"NICE={E['NICE']} " if E["NICE"] else ""
text = "\n".join([
    "# CPU training step: MegaGraph vs LibTorch, Graphormer-style model",
    "",
    f"Model: bench/graphormer_bench.py --train, {cfg['layers']} layers, "
    f"D={cfg['dim']}, H={cfg['heads']}, FFN {cfg['ffn_dim']}, B={cfg['batch']}, "
    f"{cfg['features']} float node features through a Linear encoder, in/out "
    f"degree tables of {cfg['max_degree']} rows, SPD spatial bias (attention "
    f"bias [B,H,S,S] from an embedding of distances 0..{cfg['max_distance']}), "
    f"{cfg['classes']} classes, {cfg['num_params']} parameters. One training "
    "step = forward, masked cross entropy over the training nodes, backward, "
    f"{E['OPTIMIZER'].upper()} update (lr {E['LR']}), float32, {E['THREADS']} "
    "threads for both (MEGAGRAPH_NUM_THREADS, at::set_num_threads, "
    "OMP/OPENBLAS_NUM_THREADS; LibTorch's OpenMP with OMP_WAIT_POLICY="
    f"{E['OMP_WAIT_LIST']}). Data: `" + E["DATA"] + "`, sequences of S "
    "nodes from the runtime's greedy partition, the same batch at every step "
    "on both sides. MegaGraph is `megagraph-compile --train --emit=exe` run "
    "with `--mode train`; LibTorch is bench/libtorch_graphormer_train.cpp "
    "(eager ops, autograd, torch::optim).",
    "",
    "## Machine",
    "",
    *machine,
    "",
    "## Results",
    "",
    f"ms/step = median of the {steps} steps after {warmup} warm-up steps, as "
    "each binary logs it (step_time_s: the step alone, batch building "
    "excluded). speedup = LibTorch / MegaGraph (> 1: MegaGraph faster). Peak "
    "RSS = /usr/bin/time -v maximum resident set size of the whole process "
    "(data, weights, code and libraries included). runtime-tracked = the "
    "largest mgrt_peak_bytes of a MegaGraph step (every buffer the runtime "
    "allocated during the step, inputs and outputs included; parameters are "
    "globals and not counted). RSS before 1st step = LibTorch's RSS right "
    "before its first step (weights, data, libraries). memory ratio = MegaGraph / LibTorch peak "
    "RSS. max rel loss diff = largest |loss_MegaGraph - loss_LibTorch| / "
    f"|loss_LibTorch| over all {warmup + steps} steps (tolerance {tol:g}): "
    "both train the same model on the same batches.",
    "",
    *main_table(rows),
    "",
    "Per run (whole process, from /usr/bin/time -v):",
    "",
    *detail_table(rows),
    "",
    "## Commands",
    "",
    "```sh",
    f"# environment: MEGAGRAPH_NUM_THREADS={E['THREADS']} "
    f"OMP_NUM_THREADS={E['THREADS']} OPENBLAS_NUM_THREADS={E['THREADS']} "
    f"MKL_NUM_THREADS={E['THREADS']} OMP_WAIT_POLICY={E['OMP_WAIT_LIST']}",
    f"# driver: {nice}BUILD_DIR={os.path.relpath(E['BUILD_DIR'], E['ROOT'])} "
    f"BATCH={cfg['batch']} WARMUP={warmup} STEPS={steps} OPTIMIZER={E['OPTIMIZER']} LR={E['LR']} "
    f"bash bench/run_training_bench.sh {' '.join(map(str, sizes))}",
    cmds,
    "```",
    "",
])
with open(E["RESULTS"], "w") as f:
    f.write(text)
print("\n".join(main_table(rows)))
print()
print("\n".join(detail_table(rows)))
print(f"\nwrote {os.path.relpath(E['RESULTS'], E['ROOT'])}")
if not ok:
    print("error: a run failed or the loss curves differ by more than "
          f"{tol:g}", file=sys.stderr)
    sys.exit(1)
EOF
