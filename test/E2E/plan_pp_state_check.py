"""Each pipeline rank holds only its own stage's state.

A pipelined program is one executable for every rank, but each rank
materialises only the mutable globals its stage's entries use
(gt-stage-globals): its parameters (or ZeRO-3 shards) and optimizer
moments. For Graphormer-style models compiled with `--plan pp=K,...` and
trained for a few steps under `mpirun`, the log's per-rank `state_bytes`
(what each rank's process materialised: the driver's copies and any
global the compiled entries touched) must:
  * sum, over one rank of each stage, to the bytes of the module's mutable
    globals (`--emit=gt`, as plan_accuracy_check counts them) within 1 %:
    every stage's state is held once, not once per stage (with every
    global on every rank the sum is K times the module's);
  * be below the module's on every rank (at most the largest stage's
    share).
The cost model's per-rank parameters + optimizer state (`--emit=plan`,
prediction.memory: its own stage split's worst stage) is printed next to
the worst rank's, not checked: gt-pipeline-split cuts its own units, so the
compiled stage boundaries differ from the model's (docs/plan_search.md,
known limits). The losses are those of the one-process run (the train_pp
tests check that).

Usage: plan_pp_state_check.py COMPILER WORKDIR
Prints one line per plan and `check: ... OK|FAIL`; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_accuracy_check import C, F, MAX_DIST, Graphormer, state_bytes  # noqa: E402
from train_dp_check import mpirun  # noqa: E402

STEPS = 2
# (layers, hidden, heads, S, micro-batch, plan)
PLANS = [
    (4, 64, 4, 32, 1, "pp=4,mb=8"),
    (4, 64, 4, 32, 1, "pp=2,mb=4"),
    (4, 64, 4, 32, 1, "dp=2,pp=2,mb=4,zero=1"),
    (4, 64, 4, 32, 1, "dp=2,pp=2,mb=4,zero=3"),
]


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    ok = True
    for i, (layers, d, h, s, b, plan) in enumerate(PLANS):
        torch.manual_seed(i)
        model = Graphormer(layers, d, h)
        onnx_path = os.path.join(work, f"p{i}.onnx")
        inputs = (torch.randn(b, s, F), torch.zeros(b, s, dtype=torch.long),
                  torch.zeros(b, s, dtype=torch.long),
                  torch.zeros(b, s, s, dtype=torch.long))
        torch.onnx.export(model, inputs, onnx_path,
                          input_names=["x", "in_degree", "out_degree", "spd"],
                          output_names=["logits"], opset_version=17)
        grid = {"dp": 1, "pp": 1, "cp": 1}
        for item in plan.split(","):
            k, v = item.split("=")
            if k in grid:
                grid[k] = int(v)
        devices = grid["dp"] * grid["pp"] * grid["cp"]
        common = [onnx_path, "--train", "--optimizer", "adamw", "--lr",
                  "0.001", "--plan", plan]
        pred = json.loads(subprocess.run(
            [compiler, *common, "--emit=plan", "--profile", "cpu-here",
             "--devices", str(devices)], check=True, capture_output=True,
            text=True).stdout)
        mlir = subprocess.run([compiler, *common, "--emit=gt",
                               "--mlir-elide-elementsattrs-if-larger=1"],
                              check=True, capture_output=True,
                              text=True).stdout
        exe = os.path.join(work, f"p{i}")
        subprocess.run([compiler, *common, "--emit=exe", "-O0", "-o", exe],
                       check=True)
        log = os.path.join(work, f"p{i}.jsonl")
        if os.path.exists(log):
            os.remove(log)
        data = (f"synthetic:sbm,nodes=1024,classes={C},features={F},"
                f"signal=3,seed=3")
        subprocess.run(mpirun() + ["-np", str(devices), exe, "--mode",
                                   "train", "--data", data, "--steps",
                                   str(STEPS), "--max-distance",
                                   str(MAX_DIST), "--log-json", log,
                                   "--quiet"],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        held = json.loads(open(log).readlines()[-1])["state_bytes"]
        # Rank r's stage: (r / cp) % pp; replica 0's ranks of each stage.
        per_stage = [held[k * grid["cp"]] for k in range(grid["pp"])]
        module = state_bytes(mlir)
        once = sum(per_stage) / module - 1
        mem = pred["prediction"]["memory"]
        predicted = mem["parameters"] + mem["optimizer_state"]
        err = predicted / max(held) - 1
        good = abs(once) <= 0.01 and max(held) < module
        ok = ok and good
        print(f"plan {i}: L={layers} D={d} {plan}: state per rank {held}, "
              f"stages' sum {sum(per_stage)} module {module} error "
              f"{100 * once:+.2f}% {'OK' if good else 'FAIL'}; parameters "
              f"+ optimizer state predicted {predicted:.0f}, worst rank "
              f"{max(held)} ({100 * err:+.1f}%)")
    print(f"check: each stage's state held once: {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
