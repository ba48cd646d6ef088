#!/usr/bin/env python3
"""Loss-curve parity of a compiled training run with PyTorch.

The Graphormer-style model of train_graphormer_check.py is exported to ONNX,
compiled with `megagraph-compile --train` and trained by the runtime driver
for --steps steps on synthetic:sbm with `--dump-inputs`, which writes the
exact inputs of every step as .npy. The same steps are then replayed in
PyTorch: the model is initialized from the ONNX initializers (each parameter
must match one, as is or transposed), the loss is the masked mean cross
entropy over label_mask, and the optimizer is the same (torch.optim.SGD or
AdamW with the compiler's hyperparameters). Every step's loss must agree
with the compiled run's to a relative difference <= --tolerance (1e-3).

usage: train_parity_check.py MEGAGRAPH_COMPILE WORKDIR [--optimizer sgd]
                             [--steps 20] [--lr 0.1]
Prints `weights: ...`, `records: ...`, `parity <opt>: ...` lines ending in
OK or FAIL; exits 1 on FAIL.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_graphormer_check import (B, C, F, MAX_DEGREE, MAX_DIST, S,  # noqa: E402
                                    Graphormer)

DATA = f"synthetic:sbm,nodes=4096,classes={C},features={F},signal=3,seed=3"
# The compiler's AdamW constants (passes/Train/GTOptimizer.cpp).
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


def param_names(model):
    """Every parameter slot of `model`, tied ones included."""
    return [f"{mod}.{p}" if mod else p for mod, m in model.named_modules()
            for p, v in m._parameters.items() if v is not None]


def init_from_onnx(model, reference, onnx_path):
    """Makes the parameters of `model` those of the ONNX file: each
    parameter of `reference` (the exported module) is found among the
    initializers, by name, else by value (as is or transposed: exported
    Linear weights become MatMul operands). torch.onnx.export keeps one
    initializer per distinct value and names the other parameters of that
    value (here the five LayerNorms' ones and zeros) with Identity nodes
    from it; the compiler makes each such Identity a parameter of its own,
    named after it, and so does this function. Returns (names of
    parameters without an initializer, number of ONNX parameters used)."""
    graph = onnx.load(onnx_path).graph
    inits = [(t.name, numpy_helper.to_array(t)) for t in graph.initializer]
    value = dict(inits)
    inits += [(n.output[0], value[n.input[0]]) for n in graph.node
              if n.op_type == "Identity" and n.input[0] in value
              and "::" not in n.output[0]]
    missing, shared = [], {}
    ref = dict(reference.named_parameters())
    for name in param_names(model):
        want = ref[name].detach().numpy()
        found = None
        for i, (init_name, a) in enumerate(inits):
            if init_name == name and a.shape == want.shape:
                found = (i, a)
                break
        for i, (_, a) in enumerate(inits):
            if found is not None:
                break
            if a.shape == want.shape and np.array_equal(a, want):
                found = (i, a)
            elif (a.ndim == 2 and a.T.shape == want.shape
                  and np.array_equal(a.T, want)):
                found = (i, a.T)
        if found is None:
            missing.append(name)
            continue
        i, value = found
        if i not in shared:
            shared[i] = torch.nn.Parameter(
                torch.from_numpy(np.array(value, dtype=np.float32)))
        owner, _, attr = name.rpartition(".")
        setattr(model.get_submodule(owner), attr, shared[i])
    return missing, len(shared)


def load_step(dump, t):
    d = os.path.join(dump, f"step{t}")
    return {n[:-4]: torch.from_numpy(np.load(os.path.join(d, n)))
            for n in os.listdir(d) if n.endswith(".npy")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adamw"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=B,
                    help="sequences per step the model is exported for "
                         "(1: one sequence, as in full-graph training)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(2)

    # 1. Export (as train_graphormer_check.py does) and compile.
    torch.manual_seed(0)
    b = args.batch
    example = (torch.randn(b, S, F), torch.zeros(b, S, dtype=torch.long),
               torch.zeros(b, S, dtype=torch.long),
               torch.zeros(b, S, S, dtype=torch.long))
    exported = Graphormer()
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(exported, example, onnx_path,
                      input_names=["x", "in_degree", "out_degree", "spd"],
                      output_names=["logits"], opset_version=17)
    exe = os.path.join(args.work, "train")
    subprocess.run([args.compiler, onnx_path, "--train", "--optimizer",
                    args.optimizer, "--lr", str(args.lr), "--weight-decay",
                    str(args.weight_decay), "--emit=exe", "-o", exe],
                   check=True)

    # 2. The compiled run, dumping every step's inputs.
    log = os.path.join(args.work, "log.jsonl")
    dump = os.path.join(args.work, "inputs")
    subprocess.run([exe, "--mode", "train", "--data", DATA, "--steps",
                    str(args.steps), "--max-distance", str(MAX_DIST),
                    "--log-json", log, "--dump-inputs", dump, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    records_ok = len(records) == args.steps
    print(f"records: {len(records)} {'OK' if records_ok else 'FAIL'}")

    # 3. PyTorch from the ONNX initializers (a differently seeded model, so
    # nothing is inherited by accident).
    torch.manual_seed(1234)
    model = Graphormer()
    missing, used = init_from_onnx(model, exported, onnx_path)
    nparams = len(param_names(model))
    print(f"weights: {nparams - len(missing)}/{nparams} module parameters "
          f"from {used} ONNX initializers "
          f"{'OK' if not missing else 'FAIL ' + str(missing)}")
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr,
                              weight_decay=args.weight_decay)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                betas=ADAM_BETAS, eps=ADAM_EPS,
                                weight_decay=args.weight_decay)

    # 4. Replay: same inputs, same loss, same update.
    worst, worst_step = 0.0, 0
    for t in range(1, min(args.steps, len(records)) + 1):
        inp = load_step(dump, t)
        # The compiled embeddings clamp indices to their tables.
        logits = model(inp["x"], inp["in_degree"].clamp(0, MAX_DEGREE - 1),
                       inp["out_degree"].clamp(0, MAX_DEGREE - 1),
                       inp["spd"].clamp(0, MAX_DIST))
        mask = inp["label_mask"].bool()
        loss = torch.nn.functional.cross_entropy(logits[mask],
                                                 inp["labels"][mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        ours = records[t - 1]["loss"]
        rel = (abs(ours - loss.item()) / abs(loss.item())
               if ours is not None else float("inf"))
        if t in (1, 2, args.steps) or rel > args.tolerance:
            print(f"  step {t}: compiled {ours} torch {loss.item():.7g} "
                  f"rel {rel:.2e}")
        if not rel <= worst:
            worst, worst_step = rel, t
    ok = worst <= args.tolerance
    print(f"parity {args.optimizer}: {len(records)} steps, max relative "
          f"difference {worst:.2e} (step {worst_step}) "
          f"{'OK' if ok else 'FAIL'} (tolerance {args.tolerance:g})")
    return 0 if records_ok and not missing and ok else 1


if __name__ == "__main__":
    sys.exit(main())
