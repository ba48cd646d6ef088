"""The cost model's stored state under pipeline parallelism.

Every rank of a pipeline plan holds the module's state globals: all the
stages' parameters (or ZeRO-3 shards) and optimizer moments, not only its
own stage's. For Graphormer-style models compiled with `--plan pp=K,...`
this compares the predicted per-rank parameters + optimizer state
(`megagraph-compile --emit=plan`, prediction.memory) with the bytes of the
mutable globals of the compiled module (`--emit=gt`, as plan_accuracy_check
counts them): they must agree within 2 %. Nothing is run, only compiled.

Usage: plan_pp_state_check.py COMPILER WORKDIR
Prints one line per plan and `check: ... OK|FAIL`; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_accuracy_check import F, Graphormer, state_bytes  # noqa: E402

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
        devices = 1
        for item in plan.split(","):
            k, v = item.split("=")
            if k in ("dp", "pp", "cp"):
                devices *= int(v)
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
        mem = pred["prediction"]["memory"]
        predicted = mem["parameters"] + mem["optimizer_state"]
        stored = state_bytes(mlir)
        err = predicted / stored - 1
        good = abs(err) <= 0.02
        ok = ok and good
        print(f"plan {i}: L={layers} D={d} {plan}: parameters + optimizer "
              f"state predicted {predicted:.0f} stored {stored} error "
              f"{100 * err:+.2f}% {'OK' if good else 'FAIL'}")
    print(f"check: stored state within 2%: {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
