#!/usr/bin/env python3
"""The cost model against alternative plans of ONE model on 4 ranks.

One Graphormer-style model (plan_accuracy_check.Graphormer: 4 layers,
hidden 64, 4 heads, S = 64, global batch 8, AdamW) is compiled and trained
under `mpirun -np 4` for every plan of 4 devices that the plan search
enumerates and the compiler builds: dp x pp x cp factorizations of 4, ZeRO
0-3 where dp x cp > 1, cp modes allgather and ring, micro-batches pp and
2 pp under pp (no recomputation). A plan megagraph-compile refuses is
listed as not built. For each built plan:
  memory    predicted (`--emit=plan --plan P --devices 4 --profile
            cpu-here`: peak_bytes less the inputs and outputs, the larger
            of the backward's phase and the update's with the
            parameters, gradients and optimizer state) against measured
            (max over ranks of the step's peak_bytes - base_bytes plus the
            state the rank holds, the log's state_bytes, plus a pipelined
            program's schedule buffers, the log's schedule_bytes;
            plan_accuracy_check.py says why), within
            +-TOL;
  step time the least step_time_s of the steps after the first (on the
            loaded shared machine the others include waits for a core);
            over all built plans the Spearman rank correlation of
            predicted and measured times must be >= 0.8 (unless
            --memory-only).

usage: plan_alternatives_check.py MEGAGRAPH_COMPILE WORKDIR [--steps N]
           [--plans P;P;...] [--memory-only] [--markdown FILE]
           [--repredict RESULTS.json]
Writes WORKDIR/results.json (per plan: predicted and measured memory and
step time); --repredict takes such a file and only predicts again.
Prints one `plan ...` line per plan and `check: ... OK|FAIL` lines; exits
1 on FAIL.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_accuracy_check import (C, F, MAX_DIST, Graphormer,  # noqa: E402
                                 predicted_memory, rank_memory, spearman,
                                 state_bytes)
from train_dp_check import mpirun  # noqa: E402

RANKS = 4
LAYERS, HIDDEN, HEADS, S, BATCH = 4, 64, 4, 64, 8


def plans():
    """Every plan of RANKS devices the search enumerates for the model,
    without recomputation and with micro-batches pp and 2 pp."""
    out = []
    for dp in (1, 2, 4, 8):
        for pp in (1, 2, 4):
            if RANKS % (dp * pp) or pp > LAYERS:
                continue
            cp = RANKS // (dp * pp)
            if BATCH % dp or S % cp:
                continue
            mbs = [m for m in (pp, 2 * pp) if (BATCH // dp) % m == 0] \
                if pp > 1 else [1]
            for mb in mbs:
                for zero in (0, 1, 2, 3) if dp * cp > 1 else (0,):
                    for mode in ("allgather", "ring") if cp > 1 else ("",):
                        p = f"dp={dp}"
                        if pp > 1:
                            p += f",pp={pp},mb={mb}"
                        if cp > 1:
                            p += f",cp={cp},cp_mode={mode}"
                        out.append(p + f",zero={zero}")
    return out


def field(plan, key, default=1):
    m = re.search(key + r"=(\d+)", plan)
    return int(m.group(1)) if m else default


def export(work, batch):
    """The model at per-rank (per-micro-batch) batch `batch`; the same
    weights for every plan."""
    path = os.path.join(work, f"model_b{batch}.onnx")
    if not os.path.exists(path):
        torch.manual_seed(0)
        model = Graphormer(LAYERS, HIDDEN, HEADS)
        inputs = (torch.randn(batch, S, F),
                  torch.zeros(batch, S, dtype=torch.long),
                  torch.zeros(batch, S, dtype=torch.long),
                  torch.zeros(batch, S, S, dtype=torch.long))
        torch.onnx.export(model, inputs, path,
                          input_names=["x", "in_degree", "out_degree", "spd"],
                          output_names=["logits"], opset_version=17)
    return path


def predict(compiler, work, plan):
    """The cost model's prediction for `plan` (--emit=plan), or a string
    saying why megagraph-compile refused it."""
    dp, mb = field(plan, "dp"), field(plan, "mb")
    onnx_path = export(work, BATCH // (dp * mb))
    common = [onnx_path, "--train", "--optimizer", "adamw", "--lr", "0.001",
              "--plan", plan]
    r = subprocess.run([compiler, *common, "--emit=plan", "--profile",
                        "cpu-here", "--devices", str(RANKS)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return common, "not built: " + (r.stderr.strip().splitlines() or
                                        ["?"])[-1]
    mem = json.loads(r.stdout)["prediction"]
    return common, {
        "predicted": predicted_memory(mem),
        "t_pred": mem["step_time_s"]}


def measure(compiler, work, i, plan, steps):
    """(predicted, measured) or a string saying why the plan was not
    built or did not run."""
    common, pred = predict(compiler, work, plan)
    if isinstance(pred, str):
        return pred
    mlir = subprocess.run([compiler, *common, "--emit=gt",
                           "--mlir-elide-elementsattrs-if-larger=1"],
                          check=True, capture_output=True, text=True).stdout
    exe = os.path.join(work, f"p{i}")
    r = subprocess.run([compiler, *common, "--emit=exe", "-O0", "-o", exe],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "not built: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    log = os.path.join(work, f"p{i}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    data = (f"synthetic:sbm,nodes={max(1024, 4 * BATCH * S)},classes={C},"
            f"features={F},signal=3,seed=3")
    r = subprocess.run(mpirun() + ["-np", str(RANKS), exe, "--mode", "train",
                                   "--data", data, "--steps", str(steps),
                                   "--max-distance", str(MAX_DIST),
                                   "--log-json", log, "--quiet"],
                       capture_output=True, text=True, timeout=900)
    recs = [json.loads(line) for line in open(log)] \
        if os.path.exists(log) else []
    if r.returncode != 0 or len(recs) != steps:
        return (f"did not run: exit code {r.returncode}, {len(recs)} steps: "
                + (r.stderr.strip().splitlines() or ["?"])[-1])
    per_rank = rank_memory(recs, mlir)
    return dict(pred, **{
        "measured": max(per_rank),
        "per_rank": per_rank,
        "state": recs[-1].get("state_bytes") or state_bytes(mlir),
        "schedule": recs[-1].get("schedule_bytes") or [],
        "t_meas": min(r["step_time_s"] for r in recs[1:]),
    })


def main():
    global RANKS
    # The modelled GEMM kernel (see plan_accuracy_check.py).
    os.environ["MEGAGRAPH_GEMM"] = "native"
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--ranks", type=int, default=RANKS,
                    help="devices of every plan (mpirun -np)")
    ap.add_argument("--plans", default="")
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--memory-only", action="store_true")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--repredict", default="",
                    help="a results JSON of an earlier run: only predict "
                    "again (a changed cost model) against its measurements")
    args = ap.parse_args()
    RANKS = args.ranks
    os.makedirs(args.work, exist_ok=True)
    chosen = args.plans.split(";") if args.plans else plans()
    earlier = json.load(open(args.repredict)) if args.repredict else {}
    if earlier:
        chosen = [p for p in chosen if p in earlier]
    rows, ok, memory_ok, ranking_ok = [], True, True, True
    results = {}
    for i, plan in enumerate(chosen):
        if earlier:
            res = earlier[plan]
            if not isinstance(res, str):
                _, pred = predict(args.compiler, args.work, plan)
                res = dict(res, **pred) if isinstance(pred, dict) else pred
        else:
            res = measure(args.compiler, args.work, i, plan, args.steps)
        results[plan] = res
        with open(os.path.join(args.work, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        if isinstance(res, str):
            print(f"plan {plan}: {res}")
            rows.append((plan, res))
            continue
        err = res["predicted"] / res["measured"] - 1
        good = abs(err) <= args.tolerance
        memory_ok = memory_ok and good
        rows.append((plan, res))
        print(f"plan {plan}: memory predicted {res['predicted']} measured "
              f"{res['measured']} (state {res['state']}, schedule "
              f"{res.get('schedule', [])}, ranks "
              f"{res['per_rank']}) error {100 * err:+.1f}% "
              f"{'OK' if good else 'FAIL'}; step time predicted "
              f"{1e3 * res['t_pred']:.2f} ms measured "
              f"{1e3 * res['t_meas']:.2f} ms", flush=True)
    built = [(p, r) for p, r in rows if not isinstance(r, str)]
    if not built:
        print("check: built plans: none FAIL")
        return 1
    rho = None
    if len(built) >= 2:
        rho = spearman([r["t_pred"] for _, r in built],
                       [r["t_meas"] for _, r in built])
        if not args.memory_only:
            good = rho >= 0.8
            ranking_ok = good
            print(f"check: step-time ranking: Spearman {rho:.3f} over "
                  f"{len(built)} plans {'OK' if good else 'FAIL'}")
    print(f"check: memory within {100 * args.tolerance:.0f}% over "
          f"{len(built)} plans: {'OK' if memory_ok else 'FAIL'}")
    ok = ok and memory_ok and ranking_ok
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| plan | memory predicted | measured (max rank) | error "
                    "| step predicted ms | measured ms |\n|---|---|---|---|"
                    "---|---|\n")
            for plan, r in rows:
                if isinstance(r, str):
                    f.write(f"| `{plan}` | {r} | | | | |\n")
                    continue
                err = 100 * (r["predicted"] / r["measured"] - 1)
                f.write(f"| `{plan}` | {r['predicted']} | {r['measured']} | "
                        f"{err:+.1f}% | {1e3 * r['t_pred']:.2f} | "
                        f"{1e3 * r['t_meas']:.2f} |\n")
            if rho is not None:
                f.write(f"\nSpearman (predicted vs measured step time) over "
                        f"{len(built)} plans: {rho:.3f}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
