#!/usr/bin/env python3
"""Training recipes against PyTorch: optimizer, LR schedule, clipping.

The node classifier of train_check.py is exported to ONNX and compiled with
`megagraph-compile --train` and one recipe's flags (--optimizer, --momentum,
--nesterov, --lr-schedule, --warmup-steps, --clip-grad-norm, ...). The
runtime driver trains it for --steps steps on synthetic:sbm with
`--dump-inputs`, which writes the exact inputs of every step. PyTorch 1.13
then replays those steps from the ONNX initializers (float64) with the same
recipe spelled the PyTorch way: torch.optim.SGD / Adam / AdamW, a
torch.optim.lr_scheduler.LambdaLR stepped after every optimizer step with the
factor of the Hugging Face transformers schedule (copied below), and
torch.nn.utils.clip_grad_norm_ between backward and step. Every step's loss
must agree with the compiled run's to a relative 1e-4.

usage: train_recipes_check.py MEGAGRAPH_COMPILE WORKDIR RECIPE [--steps 20]
Prints `records: ...`, `weights: ...` and `recipe <name>: ...` lines ending
in OK or FAIL; exits 1 on FAIL.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_check import B, C, F, S, NodeClassifier  # noqa: E402
from train_parity_check import init_from_onnx, load_step, param_names  # noqa: E402

DATA = f"synthetic:sbm,nodes=1024,classes={C},features={F},signal=3,seed=7"
TOLERANCE = 1e-4

# name: (megagraph-compile flags, torch optimizer, its arguments, schedule)
# with schedule (kind, warmup, total, min_lr, power) or None, and the
# clip_grad_norm_ max norm (0: no clipping).
RECIPES = {
    "sgd-momentum": (
        "--optimizer sgd --lr 0.1 --momentum 0.9",
        "SGD", dict(lr=0.1, momentum=0.9), None, 0.0),
    "sgd-dampening": (
        "--optimizer sgd --lr 0.1 --momentum 0.8 --dampening 0.3",
        "SGD", dict(lr=0.1, momentum=0.8, dampening=0.3), None, 0.0),
    "sgd-nesterov-wd": (
        "--optimizer sgd --lr 0.05 --momentum 0.9 --nesterov "
        "--weight-decay 0.01",
        "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
        None, 0.0),
    "adam-wd": (
        "--optimizer adam --lr 0.01 --weight-decay 0.01 --beta1 0.8 "
        "--beta2 0.99 --eps 1e-7",
        "Adam", dict(lr=0.01, weight_decay=0.01, betas=(0.8, 0.99), eps=1e-7),
        None, 0.0),
    "adamw-cosine-clip": (
        "--optimizer adamw --lr 0.01 --weight-decay 0.05 --lr-schedule cosine "
        "--warmup-steps 5 --total-steps 20 --clip-grad-norm 0.5",
        "AdamW", dict(lr=0.01, weight_decay=0.05),
        ("cosine", 5, 20, 0.0, 1.0), 0.5),
    "sgd-linear": (
        "--optimizer sgd --lr 0.5 --lr-schedule linear --warmup-steps 3 "
        "--total-steps 20",
        "SGD", dict(lr=0.5), ("linear", 3, 20, 0.0, 1.0), 0.0),
    "sgd-polynomial": (
        "--optimizer sgd --lr 0.5 --momentum 0.5 --lr-schedule polynomial "
        "--warmup-steps 2 --total-steps 15 --min-lr 0.01 --power 2",
        "SGD", dict(lr=0.5, momentum=0.5),
        ("polynomial", 2, 15, 0.01, 2.0), 0.0),
    "sgd-cosine-min-lr-clip": (
        "--optimizer sgd --lr 0.5 --lr-schedule cosine --total-steps 12 "
        "--min-lr 0.05 --clip-grad-norm 2.0",
        "SGD", dict(lr=0.5), ("cosine", 0, 12, 0.05, 1.0), 2.0),
}


# The LambdaLR factors of transformers.optimization (v4.40), verbatim up to
# the argument names: get_constant_schedule_with_warmup,
# get_linear_schedule_with_warmup, get_cosine_schedule_with_warmup
# (num_cycles=0.5) / get_cosine_with_min_lr_schedule_with_warmup (min_lr) and
# get_polynomial_decay_schedule_with_warmup (lr_end, power).
def hf_factor(kind, step, warmup, total, lr_init, min_lr, power):
    if kind == "polynomial":
        lr_end = min_lr
        if step < warmup:
            return float(step) / float(max(1, warmup))
        elif step > total:
            return lr_end / lr_init
        lr_range = lr_init - lr_end
        decay_steps = total - warmup
        pct_remaining = 1 - (step - warmup) / decay_steps
        decay = lr_range * pct_remaining**power + lr_end
        return decay / lr_init
    if step < warmup:
        return float(step) / float(max(1, warmup))
    if kind == "constant":
        return 1.0
    if kind == "linear":
        return max(0.0, float(total - step) / float(max(1, total - warmup)))
    progress = float(step - warmup) / float(max(1, total - warmup))
    factor = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))
    if min_lr > 0:
        min_lr_rate = min_lr / lr_init
        factor = factor * (1 - min_lr_rate) + min_lr_rate
    return max(0.0, factor)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("recipe", choices=sorted(RECIPES))
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    flags, opt_name, opt_args, schedule, clip = RECIPES[args.recipe]
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(2)

    # 1. Export (as train_check.py does) and compile with the recipe.
    torch.manual_seed(0)
    exported = NodeClassifier()
    onnx_path = os.path.join(args.work, "model.onnx")
    torch.onnx.export(exported, (torch.randn(B, S, F),), onnx_path,
                      input_names=["x"], output_names=["logits"],
                      opset_version=17)
    exe = os.path.join(args.work, "train")
    subprocess.run([args.compiler, onnx_path, "--train", *flags.split(),
                    "--emit=exe", "-o", exe], check=True)

    # 2. The compiled run, dumping every step's inputs.
    log = os.path.join(args.work, "log.jsonl")
    dump = os.path.join(args.work, "inputs")
    subprocess.run([exe, "--mode", "train", "--data", DATA, "--steps",
                    str(args.steps), "--log-json", log, "--dump-inputs", dump,
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    records_ok = len(records) == args.steps
    print(f"records: {len(records)} {'OK' if records_ok else 'FAIL'}")

    # 3. PyTorch from the ONNX initializers, in float64.
    torch.manual_seed(1234)
    model = NodeClassifier()
    missing, used = init_from_onnx(model, exported, onnx_path)
    nparams = len(param_names(model))
    print(f"weights: {nparams - len(missing)}/{nparams} module parameters "
          f"from {used} ONNX initializers "
          f"{'OK' if not missing else 'FAIL ' + str(missing)}")
    model.double()
    opt = getattr(torch.optim, opt_name)(model.parameters(), **opt_args)
    sched = None
    if schedule:
        kind, warmup, total, min_lr, power = schedule
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: hf_factor(kind, s, warmup, total, opt_args["lr"],
                                     min_lr, power))

    # 4. Replay: same inputs, same loss, same recipe.
    worst, worst_step, clipped = 0.0, 0, 0
    for t in range(1, min(args.steps, len(records)) + 1):
        inp = load_step(dump, t)
        logits = model(inp["x"].double())
        mask = inp["label_mask"].bool()
        loss = torch.nn.functional.cross_entropy(logits[mask],
                                                 inp["labels"][mask])
        opt.zero_grad()
        loss.backward()
        if clip > 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            clipped += int(norm > clip)
        opt.step()
        if sched:
            sched.step()
        ours = records[t - 1]["loss"]
        rel = (abs(ours - loss.item()) / abs(loss.item())
               if ours is not None else float("inf"))
        if t in (1, 2, args.steps) or rel > TOLERANCE:
            print(f"  step {t}: compiled {ours} torch {loss.item():.9g} "
                  f"rel {rel:.2e}")
        if not rel <= worst:
            worst, worst_step = rel, t
    ok = worst <= TOLERANCE
    # A clipping recipe must clip: otherwise it checks nothing.
    clip_ok = clip == 0 or clipped > 0
    clip_text = f", clipped {clipped} steps" if clip > 0 else ""
    print(f"recipe {args.recipe}: {len(records)} steps, max relative "
          f"difference {worst:.2e} (step {worst_step}){clip_text} "
          f"{'OK' if ok and clip_ok else 'FAIL'} (tolerance {TOLERANCE:g})")
    return 0 if records_ok and not missing and ok and clip_ok else 1


if __name__ == "__main__":
    sys.exit(main())
