#!/usr/bin/env bash
# CPU training (and inference) benchmark against PyTorch 2.x from PyPI: the
# Graphormer-style bench model's training step compiled by MegaGraph
# (megagraph-compile --train, run with --mode train) and the same step in
# PyTorch 2.x (bench/torch2_graphormer_train.py, in a venv) as users write
# it: eager hand-written attention, eager F.scaled_dot_product_attention,
# and torch.compile of the hand-written model (within a time limit). One
# invocation; for each (B, S) the sides run one after the other: same
# initial weights (params/*.npy), the same batch at step t (MegaGraph's
# --dump-inputs, read back by the PyTorch side), same AdamW, same threads.
# A benchmark, never a test.
#
#   bash bench/run_torch2_bench.sh [S ...]                (default: 1024 2048)
#
# Environment (defaults in brackets):
#   BUILD_DIR  build with megagraph-compile and megagraph_rt      [build-final]
#   WORK       scratch dir               [$BUILD_DIR/bench-torch2-work]
#   TORCH_PY   python of a venv with PyTorch 2.x  [/opt/torch-venv/bin/python]
#   BATCHES    batch sizes B to run                                     [1 2]
#   THREADS    threads for both                                           [2]
#   WARMUP     untimed first steps of each run                            [2]
#   STEPS      timed steps after them (median reported)                   [5]
#   LR         AdamW learning rate                                     [1e-3]
#   DATA       MegaGraph's --data [synthetic:sbm,nodes=16384,classes=8,features=16,seed=1]
#   COMPILE_LIMIT  seconds torch.compile's run may take in all (its compile
#              included) before it is stopped and reported as timed out [400]
#   VARIANTS   PyTorch variants: manual, sdpa, compile   [manual sdpa compile]
#   MG_AB      an environment assignment for a second MegaGraph training
#              run of the same binary, reported beside the first (an A/B of
#              a runtime switch; empty: no second run)
#                                                 [MEGAGRAPH_ALLOC_CACHE=0]
#   INFER_VARIANTS  PyTorch variants of the inference runs  [manual sdpa]
#   INFER      1: also inference (forward only: MegaGraph compiled without
#              --train, PyTorch under no_grad), fastest of the timed runs [1]
#   LOSS_TOL   max relative loss difference per step, any PyTorch variant vs
#              MegaGraph, before the run counts as "not the same training" [1e-3]
#   RESULTS    markdown file    [bench/results/<date>-cpu-training-torch2.md]
#   REUSE      1: keep an exported model and its executables               [0]
#   REPORT_ONLY  1: run nothing, write RESULTS from what WORK holds (an
#              interrupted run: a (B, S) without a WORK/s<S>b<B> folder is
#              left out; its start and load come from WORK/meta.env)     [0]
#   NICE       run every timed process under `nice -n NICE`              [-10]
#   SETTLE     seconds to wait before each timed process (bench_common.sh) [5]
#   OMP_WAIT_POLICY  PyTorch's OpenMP threads between parallel regions:
#              PASSIVE (sleep) keeps them from spinning on a shared machine
#              (see run_training_bench.sh)                          [PASSIVE]
#
# Peak RSS is of the whole process (/usr/bin/time -v), one process per side
# and variant. The script prints the tables, writes RESULTS and exits 1 if a
# MegaGraph run failed or a PyTorch variant's loss curve differs from
# MegaGraph's by more than LOSS_TOL.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build-final}
NICE=${NICE--10}
# BUILD_DIR, THREADS, NICE, DATE, PY, thread environment, log, run
source bench/bench_common.sh
WORK=${WORK:-$BUILD_DIR/bench-torch2-work}
TORCH_PY=${TORCH_PY:-/opt/torch-venv/bin/python}
BATCHES=${BATCHES:-1 2}
WARMUP=${WARMUP:-2}
STEPS=${STEPS:-5}
LR=${LR:-1e-3}
DATA=${DATA:-synthetic:sbm,nodes=16384,classes=8,features=16,seed=1}
COMPILE_LIMIT=${COMPILE_LIMIT:-400}
VARIANTS=${VARIANTS:-manual sdpa compile}
INFER_VARIANTS=${INFER_VARIANTS:-manual sdpa}
MG_AB=${MG_AB-MEGAGRAPH_ALLOC_CACHE=0}
INFER=${INFER:-1}
LOSS_TOL=${LOSS_TOL:-1e-3}
REUSE=${REUSE:-0}
RESULTS=${RESULTS:-$ROOT/bench/results/$DATE-cpu-training-torch2.md}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1024 2048)
TOTAL=$((WARMUP + STEPS))

COMPILE=$BUILD_DIR/bin/megagraph-compile
BUILD_TARGETS="megagraph-compile megagraph_rt megagraph_driver"
require_tools "$COMPILE" "$TORCH_PY" /usr/bin/time
mkdir -p "$WORK" "$(dirname "$RESULTS")"
read -r -a PREFIX <<<"$(nice_prefix)"

# Seconds a command takes, into FILE: timed FILE CMD...
timed() {
  local out=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  run "$@"
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.1f\n", $2 - $1}' >"$out"
}

# One PyTorch run: torch_side DIR NAME [ARGS...]; NAME.jsonl, NAME.time.
torch_side() {
  local d=$1 name=$2
  shift 2
  local limit=()
  case $name in *compile*) limit=(timeout "$COMPILE_LIMIT") ;; esac
  rm -f "$d/$name.jsonl"
  log "$(basename "$d"): PyTorch $name"
  settle
  run "${PREFIX[@]}" /usr/bin/time -v -o "$d/$name.time" "${limit[@]}" \
    "$TORCH_PY" bench/torch2_graphormer_train.py --model-dir "$d" \
    --batches "$d/batches" --threads "$THREADS" --lr "$LR" \
    --log-json "$d/$name.jsonl" "$@" >"$d/$name.log" 2>&1 ||
    echo "bench: PyTorch $name failed or timed out in $d (status $?)"
  tail -1 "$d/$name.log"
}

CMDS_FILE=$WORK/commands.txt
if [ "${REPORT_ONLY:-0}" = 1 ]; then
  # shellcheck disable=SC1091
  source "$WORK/meta.env"
  BATCHES_RUN=""
else
  START=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  UPTIME_BEFORE=$(uptime)
  printf 'START=%q\nLOAD_BEFORE=%q\nUPTIME_BEFORE=%q\n' "$START" \
    "$LOAD_BEFORE" "$UPTIME_BEFORE" >"$WORK/meta.env"
  BATCHES_RUN=$BATCHES
fi
for B in $BATCHES_RUN; do
  for S in "${SIZES[@]}"; do
    # what ran so far (REPORT_ONLY reads it after an interrupted run)
    [ ${#COMMANDS[@]} -eq 0 ] || printf '%s\n' "${COMMANDS[@]}" >"$CMDS_FILE"
    D=$WORK/s${S}b$B
    if [ "$REUSE" != 1 ] || [ ! -f "$D/config.json" ]; then
      log "S=$S B=$B: export"
      rm -rf "$D"
      run $PY bench/graphormer_bench.py --train --nodes "$S" --batch "$B" \
        --out "$D" >"$D.export.log"
    fi
    EXE=$D/graphormer_train
    if [ "$REUSE" != 1 ] || [ ! -x "$EXE" ]; then
      log "S=$S B=$B: megagraph-compile --train"
      rm -f "$EXE"
      timed "$D/compile_s.txt" "$COMPILE" "$D/model.onnx" --train \
        --optimizer adamw --lr "$LR" --emit=exe -o "$EXE" ||
        echo "bench: megagraph-compile --train failed at S=$S B=$B"
    fi
    rm -rf "$D/batches" "$D/megagraph.jsonl"
    if [ -x "$EXE" ]; then
      log "S=$S B=$B: MegaGraph train ($TOTAL steps)"
      settle
      run "${PREFIX[@]}" /usr/bin/time -v -o "$D/megagraph.time" "$EXE" \
        --mode train --data "$DATA" --steps "$TOTAL" --max-distance 8 \
        --partition greedy --dump-inputs "$D/batches" \
        --log-json "$D/megagraph.jsonl" >"$D/megagraph.log" 2>&1 ||
        echo "bench: MegaGraph failed at S=$S B=$B (status $?)"
      tail -1 "$D/megagraph.log"
      rm -f "$D/megagraph-ab.jsonl"
      if [ -n "$MG_AB" ]; then
        log "S=$S B=$B: MegaGraph train with $MG_AB"
        run env "$MG_AB" "${PREFIX[@]}" /usr/bin/time -v \
          -o "$D/megagraph-ab.time" "$EXE" --mode train --data "$DATA" \
          --steps "$TOTAL" --max-distance 8 --partition greedy \
          --log-json "$D/megagraph-ab.jsonl" >"$D/megagraph-ab.log" 2>&1 ||
          echo "bench: MegaGraph ($MG_AB) failed at S=$S B=$B (status $?)"
        tail -1 "$D/megagraph-ab.log"
      fi
    fi
    [ -d "$D/batches/step1" ] || continue
    for v in $VARIANTS; do
      case $v in
      manual | sdpa) torch_side "$D" "torch-$v" --steps "$TOTAL" --attention "$v" ;;
      compile) torch_side "$D" torch-compile --steps "$TOTAL" --attention manual --compile ;;
      esac
    done

    [ "$INFER" = 1 ] || continue
    IEXE=$D/graphormer_infer
    if [ "$REUSE" != 1 ] || [ ! -x "$IEXE" ]; then
      log "S=$S B=$B: megagraph-compile (inference)"
      rm -f "$IEXE"
      timed "$D/compile_infer_s.txt" "$COMPILE" "$D/model.onnx" --emit=exe \
        -o "$IEXE" || echo "bench: megagraph-compile failed at S=$S B=$B"
    fi
    if [ -x "$IEXE" ]; then
      IN=()
      for n in x in_degree out_degree spd; do
        IN+=(--input "$n=$D/batches/step1/$n.npy")
      done
      log "S=$S B=$B: MegaGraph infer"
      settle
      run "${PREFIX[@]}" /usr/bin/time -v -o "$D/megagraph-infer.time" \
        "$IEXE" --mode infer "${IN[@]}" --repeat "$TOTAL" --quiet \
        --output-dir "$D/megagraph-infer-out" >"$D/megagraph-infer.log" 2>&1 ||
        echo "bench: MegaGraph inference failed at S=$S B=$B (status $?)"
      tail -1 "$D/megagraph-infer.log"
    fi
    for v in $INFER_VARIANTS; do
      case $v in
      manual | sdpa) torch_side "$D" "torch-infer-$v" --steps "$TOTAL" \
        --attention "$v" --infer --save-logits "$D/torch-infer-$v.npy" ;;
      compile) torch_side "$D" torch-infer-compile --steps "$TOTAL" \
        --attention manual --compile --infer ;;
      esac
    done
  done
done
END=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
UPTIME_AFTER=$(uptime)

[ "${REPORT_ONLY:-0}" = 1 ] || printf '%s\n' "${COMMANDS[@]}" >"$CMDS_FILE"
TORCH_VERSION=$("$TORCH_PY" -c 'import torch; print(torch.__version__)')
export ROOT WORK THREADS WARMUP STEPS LR DATA LOSS_TOL RESULTS START END \
  LOAD_BEFORE LOAD_AFTER UPTIME_BEFORE UPTIME_AFTER CMDS_FILE BUILD_DIR NICE \
  BATCHES VARIANTS INFER_VARIANTS MG_AB INFER COMPILE_LIMIT TORCH_VERSION OMP_WAIT_POLICY
export SIZES_LIST="${SIZES[*]}"
PYTHONPATH=$ROOT/bench $PY - <<'EOF'
import json, math, os, statistics, sys
import numpy as np
from bench_report import gnu_time, sh

E = os.environ
work = E["WORK"]
sizes = [int(s) for s in E["SIZES_LIST"].split()]
batches = [int(b) for b in E["BATCHES"].split()]
warmup, steps, tol = int(E["WARMUP"]), int(E["STEPS"]), float(E["LOSS_TOL"])
variants = E["VARIANTS"].split()
ivariants = E["INFER_VARIANTS"].split()
total = warmup + steps
MiB = 2.0**20


def records(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def num(path):
    return float(open(path).read()) if os.path.exists(path) else None


def loss_diff(mine, theirs):
    """Largest relative difference of two loss curves; inf where a loss is
    not finite."""
    worst = 0.0
    for a, c in zip(mine, theirs):
        if not (math.isfinite(a) and math.isfinite(c)):
            return float("inf")
        worst = max(worst, abs(a - c) / max(abs(c), 1e-12))
    return worst


def side(d, name):
    """Median s/step of the timed steps, first step s, peak RSS MiB, losses;
    None if the run did not complete."""
    rs = records(f"{d}/{name}.jsonl")
    if len(rs) != total or not os.path.exists(f"{d}/{name}.time"):
        return None
    t = [r["step_time_s"] for r in rs[warmup:]]
    return dict(med=statistics.median(t), first=rs[0]["step_time_s"],
                # A loss the run could not write (not finite: JSON null)
                # counts as inf, so the run fails the loss tolerance.
                losses=[r["loss"] if r.get("loss") is not None
                        else float("inf") for r in rs],
                rss=gnu_time(f"{d}/{name}.time")["rss"])


def infer_mg(d):
    log = f"{d}/megagraph-infer.log"
    if not os.path.exists(log) or " ok, " not in open(log).read():
        return None
    line = [l for l in open(log) if "infer ok" in l][-1]
    return dict(min=float(line.split("min ")[1].split(" ms")[0]) / 1e3,
                rss=gnu_time(f"{d}/megagraph-infer.time")["rss"])


def fmt(x, f="{:.2f}"):
    return "—" if x is None else f.format(x)


ok = True
train_rows, infer_rows = [], []
for b in batches:
    for s in sizes:
        d = os.path.join(work, f"s{s}b{b}")
        if not os.path.isdir(d):
            continue  # REPORT_ONLY after a run stopped before this one
        mg = side(d, "megagraph")
        tv = {v: side(d, f"torch-{v}") for v in variants}
        ab = side(d, "megagraph-ab") if E["MG_AB"] else None
        ok &= mg is not None
        done = {v: r for v, r in tv.items() if r}
        rel = None
        if mg and done:
            rel = max(loss_diff(mg["losses"], r["losses"])
                      for r in done.values())
            ok &= rel <= tol
            # The best variant among those that train the same model.
            done = {v: r for v, r in done.items()
                    if loss_diff(mg["losses"], r["losses"]) <= tol}
        best = min(done, key=lambda v: done[v]["med"]) if done else None
        if ab and mg:
            rel_ab = max(abs(a - c) / max(abs(c), 1e-12)
                         for a, c in zip(ab["losses"], mg["losses"]))
            ok &= rel_ab <= tol
        train_rows.append(dict(S=s, B=b, mg=mg, ab=ab, tv=tv, best=best, rel=rel,
                               compile_s=num(f"{d}/compile_s.txt")))
        if E["INFER"] != "1":
            continue
        im = infer_mg(d)
        iv = {}
        for v in ivariants:
            rs = records(f"{d}/torch-infer-{v}.jsonl")
            if len(rs) == total:
                iv[v] = dict(min=min(r["step_time_s"] for r in rs[warmup:]),
                             rss=gnu_time(f"{d}/torch-infer-{v}.time")["rss"])
        err = None
        ref = f"{d}/torch-infer-manual.npy"
        got = f"{d}/megagraph-infer-out/logits.npy"
        if os.path.exists(ref) and os.path.exists(got):
            err = float(np.abs(np.load(ref) - np.load(got)).max())
        infer_rows.append(dict(S=s, B=b, mg=im, tv=iv, err=err,
                               compile_s=num(f"{d}/compile_infer_s.txt")))

NAMES = dict(manual="eager hand-written", sdpa="eager SDPA",
             compile="torch.compile")


def train_table():
    out = ["| S | B | MegaGraph s/step | " +
           " | ".join(f"PyTorch {NAMES[v]} s/step" for v in variants) +
           " | best PyTorch / MegaGraph | peak RSS MiB MegaGraph / best "
           "PyTorch (ratio) | max rel loss diff | megagraph-compile s |",
           "|---:|---:|---:|" + "---:|" * len(variants) + "---:|---:|---:|---:|"]
    for r in train_rows:
        mg, tv, best = r["mg"], r["tv"], r["best"]
        cells = [fmt(tv[v]["med"]) if tv[v] else
                 ("timed out / failed" if v == "compile" else "FAILED")
                 for v in variants]
        if mg and best:
            bt = tv[best]
            speed = f"{bt['med'] / mg['med']:.2f}x ({NAMES[best]})"
            mem = f"{mg['rss']:.0f} / {bt['rss']:.0f} ({mg['rss'] / bt['rss']:.2f})"
        else:
            speed = mem = "—"
        flag = "" if r["rel"] is None or r["rel"] <= tol else " **MISMATCH**"
        out.append(f"| {r['S']} | {r['B']} | "
                   f"{fmt(mg['med']) if mg else '**FAILED**'} | "
                   + " | ".join(cells) +
                   f" | {speed} | {mem} | {fmt(r['rel'], '{:.1e}')}{flag} | "
                   f"{fmt(r['compile_s'], '{:.1f}')} |")
    return out


def detail_table():
    out = ["| S | B | side | first step s (torch.compile: its compile) | "
           "median s/step | peak RSS MiB | loss step 1 | loss last step |",
           "|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in train_rows:
        for name, x in [("MegaGraph", r["mg"]),
                        (f"MegaGraph, {E['MG_AB']}", r["ab"])] + [
                (f"PyTorch {NAMES[v]}", r["tv"][v]) for v in variants]:
            if x:
                out.append(f"| {r['S']} | {r['B']} | {name} | {x['first']:.2f} | "
                           f"{x['med']:.2f} | {x['rss']:.0f} | "
                           f"{x['losses'][0]:.5f} | {x['losses'][-1]:.5f} |")
    return out


def infer_table():
    out = ["| S | B | MegaGraph ms/forward | " +
           " | ".join(f"PyTorch {NAMES[v]} ms" for v in ivariants) +
           " | best PyTorch / MegaGraph | peak RSS MiB MegaGraph / best "
           "PyTorch | max abs logits diff | megagraph-compile s |",
           "|---:|---:|---:|" + "---:|" * len(ivariants) + "---:|---:|---:|---:|"]
    for r in infer_rows:
        mg, tv = r["mg"], r["tv"]
        best = min(tv, key=lambda v: tv[v]["min"]) if tv else None
        cells = [f"{tv[v]['min'] * 1e3:.0f}" if v in tv else "—"
                 for v in ivariants]
        if mg and best:
            speed = f"{tv[best]['min'] / mg['min']:.2f}x"
            mem = f"{mg['rss']:.0f} / {tv[best]['rss']:.0f}"
        else:
            speed = mem = "—"
        out.append(f"| {r['S']} | {r['B']} | "
                   f"{fmt(mg['min'] * 1e3 if mg else None, '{:.0f}')} | "
                   + " | ".join(cells) +
                   f" | {speed} | {mem} | {fmt(r['err'], '{:.1e}')} | "
                   f"{fmt(r['compile_s'], '{:.1f}')} |")
    return out


first = train_rows[0]
cfg = json.load(open(os.path.join(work, f"s{first['S']}b{first['B']}",
                                  "config.json")))
cpu = sh("lscpu | sed -n 's/^Model name:[[:space:]]*//p'")
commit = sh(f"git -C {E['ROOT']} rev-parse --short HEAD")
dirty = " + uncommitted changes" if sh(
    f"git -C {E['ROOT']} status --porcelain --untracked-files=no") else ""
cmds = open(E["CMDS_FILE"]).read().strip()
text = "\n".join([
    f"# CPU training step: MegaGraph vs PyTorch {E['TORCH_VERSION']}, "
    "Graphormer-style model",
    "",
    f"Model: bench/graphormer_bench.py --train, {cfg['layers']} layers, "
    f"D={cfg['dim']}, H={cfg['heads']}, FFN {cfg['ffn_dim']}, GELU, pre-LN, "
    f"{cfg['features']} float node features through a Linear encoder, "
    f"degree tables of {cfg['max_degree']} rows, SPD spatial bias "
    f"[B,H,S,S] from an embedding of distances 0..{cfg['max_distance']}, "
    f"{cfg['classes']} classes, {cfg['num_params']} parameters. One training "
    "step = forward, masked cross entropy over the training nodes, backward, "
    f"AdamW (lr {E['LR']}, betas 0.9/0.999, eps 1e-8, no weight decay), "
    f"float32, {E['THREADS']} threads for each (MEGAGRAPH_NUM_THREADS, "
    "torch.set_num_threads, OMP_WAIT_POLICY="
    f"{E['OMP_WAIT_POLICY']}). Data: `{E['DATA']}`, sequences of S nodes "
    "(greedy partition); the PyTorch side reads the batches MegaGraph's run "
    "dumped (--dump-inputs), so step t sees the same batch on every side, "
    "from the same initial weights (params/*.npy).",
    "",
    f"PyTorch {E['TORCH_VERSION']} from PyPI (venv), three variants: eager "
    "with the hand-written attention `softmax(q@kᵀ/√d + bias)@v`, eager "
    "`F.scaled_dot_product_attention(q, k, v, attn_mask=bias)`, and "
    "`torch.compile` (inductor) of the hand-written model, stopped after "
    f"{E['COMPILE_LIMIT']} s.",
    "",
    "## Machine",
    "",
    f"- CPU: {cpu}, {sh('nproc')} CPU(s); "
    + sh("grep MemTotal /proc/meminfo | awk '{printf \"memory %.1f GiB\", $2/1048576}'"),
    f"- MegaGraph: commit {commit}{dirty}; PyTorch {E['TORCH_VERSION']}",
    f"- Date: {E['START']} .. {E['END']}",
    f"- Load: before `{E['UPTIME_BEFORE'].strip()}`; after "
    f"`{E['UPTIME_AFTER'].strip()}`. The 2 cores are shared with other "
    "jobs (other engineers' builds), so times vary"
    + (f"; every timed process ran under nice -n {E['NICE']}" if E["NICE"]
       else "") + ".",
    "",
    "## Training",
    "",
    f"s/step = median of the {steps} steps after {warmup} warm-up steps "
    "(the step alone, batch loading excluded). best PyTorch / MegaGraph > 1: "
    "MegaGraph faster. Peak RSS = /usr/bin/time -v maximum resident set size "
    "of the whole process. max rel loss diff = largest |loss_MegaGraph - "
    f"loss_PyTorch| / |loss_PyTorch| over all {total} steps and every "
    f"PyTorch variant (tolerance {tol:g}).",
    "",
    *train_table(),
    "",
    "Per run" + (f" (MegaGraph, {E['MG_AB']}: the same binary run again "
                 "with that environment)" if E["MG_AB"] else "") + ":",
    "",
    *detail_table(),
    "",
    *(["## Inference", "",
       "ms/forward = the fastest of the timed forwards (MegaGraph: "
       f"--repeat {total}, min; PyTorch: under torch.no_grad(), after "
       f"{warmup} warm-up forwards) on the first training batch. max abs "
       "logits diff: MegaGraph vs PyTorch eager hand-written. "
       "megagraph-compile s: the inference build.",
       "", *infer_table(), ""] if E["INFER"] == "1" else []),
    "## Commands",
    "",
    "```sh",
    f"# environment: MEGAGRAPH_NUM_THREADS={E['THREADS']} "
    f"OMP_NUM_THREADS={E['THREADS']} OMP_WAIT_POLICY={E['OMP_WAIT_POLICY']}",
    f"# driver: BUILD_DIR={os.path.relpath(E['BUILD_DIR'], E['ROOT'])} "
    f"BATCHES='{E['BATCHES']}' WARMUP={warmup} STEPS={steps} "
    f"NICE={E['NICE']} bash bench/run_torch2_bench.sh "
    + " ".join(map(str, sizes)),
    cmds,
    "```",
    "",
])
with open(E["RESULTS"], "w") as f:
    f.write(text)
print("\n".join(train_table()))
print()
print("\n".join(detail_table()))
if E["INFER"] == "1":
    print()
    print("\n".join(infer_table()))
print(f"\nwrote {os.path.relpath(E['RESULTS'], E['ROOT'])}")
if not ok:
    print("error: a MegaGraph run failed or the loss curves differ by more "
          f"than {tol:g}", file=sys.stderr)
    sys.exit(1)
EOF
