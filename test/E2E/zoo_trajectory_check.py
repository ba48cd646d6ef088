#!/usr/bin/env python3
"""Training trajectory of a model-zoo entry (examples/zoo/) against PyTorch.

Compiles the committed `examples/zoo/<entry>/<style>/model.onnx` with
`megagraph-compile --train --optimizer sgd --lr LR --loss cross_entropy
--emit=exe`, trains it STEPS steps on one fixed batch (the committed
`inputs/*.npy`, random labels and a label mask over the output's items, in
one folder) from the exported weights, and replays the same steps on the zoo's
PyTorch module (`build()` with the exported weights, as
zoo_gradient_check.py builds it) with `torch.optim.SGD`: every step's masked
mean cross-entropy must agree to a relative --tolerance (1e-4). The binary
reads the folder with `--mode train --data npy:DIR` (the same tensors every
step) and logs each step's loss with `--log-json`.

The compiled model trains what the importer makes parameters: each PyTorch
parameter, where the exporter shared one initializer between parameters of
equal value the importer unties them (docs/importer.md), and running
statistics stay buffers. SGD is linear, so a parameter the exporter stored
transposed or reshaped follows the same trajectory. An export that folded a
BatchNorm into the Linear before it (the dynamo exporter, SGFormer's graph
branch) trains another parametrization (W' = s W with s from the
BatchNorm, which SGD moves differently from W and s), which no replay of
the module follows; zoo_gradient_check.py checks its gradients.

With `--recipe adamw` both sides run the recipe of a GT paper instead:
AdamW (lr 1e-3, weight decay 0.01) with 5 warmup steps and a cosine decay
over the run (`--lr-schedule cosine --warmup-steps 5 --total-steps STEPS`,
replayed with `LambdaLR` and the formula of transformers'
`get_cosine_schedule_with_warmup`) and gradients clipped by their global norm
(`--clip-grad-norm`, replayed with `clip_grad_norm_`) to half the global
gradient norm at the exported weights, so that the clamp acts from the
first step on. AdamW is elementwise
and the clipping coefficient depends on the global norm only, so the
exported layouts do not matter there either.

usage: zoo_trajectory_check.py MEGAGRAPH_COMPILE WORKDIR ENTRY [STYLE]
       [--recipe sgd|adamw] [--steps 20] [--lr 0.01|1e-3] [--tolerance 1e-4]
Prints `trajectory ENTRY STYLE: N steps, max relative difference E OK|FAIL`;
exits 1 on FAIL.
"""
import argparse
import math
import json
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_gradient_check import ZOO, build_reference, load_entry  # noqa: E402


def masked_ce(out, labels, mask):
    classes = out.shape[-1]
    ce = nn.functional.cross_entropy(out.reshape(-1, classes),
                                     labels.reshape(-1), reduction="none")
    w = mask.reshape(-1).to(out.dtype)
    return (ce * w).sum() / w.sum().clamp(min=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("entry")
    ap.add_argument("style", nargs="?", default="torch113")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--recipe", choices=["sgd", "adamw"], default="sgd")
    ap.add_argument("--lr", type=float, default=None,
                    help="0.01 for sgd, 1e-3 for adamw")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    if args.lr is None:
        args.lr = 0.01 if args.recipe == "sgd" else 1e-3
    warmup, decay = 5, 0.01
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    folder = os.path.join(ZOO, args.entry, args.style)
    onnx_path = os.path.join(folder, "model.onnx")

    # 1. The reference with the exported weights, in float64 where the
    #    model allows, and the fixed batch.
    mod, kw = load_entry(args.entry)
    feeds = {f[:-4]: np.load(os.path.join(folder, "inputs", f))
             for f in sorted(os.listdir(os.path.join(folder, "inputs")))}
    named = [(n, feeds.get(n, a)) for n, a in mod.make_inputs(**kw)]
    for dtype in (torch.float64, torch.float32):
        torch.set_default_dtype(dtype)
        model = build_reference(mod).to(dtype)
        inputs = [torch.from_numpy(np.ascontiguousarray(a)) for _, a in named]
        inputs = [a.to(dtype) if a.is_floating_point() else a for a in inputs]
        try:
            out = model(*inputs)
            break
        except RuntimeError as err:  # e.g. an explicit .float() in forward
            print(f"reference in {dtype} failed ({err}); trying float32")
    out = out if isinstance(out, torch.Tensor) else out[0]
    items = tuple(out.shape[:-1])
    rng = np.random.default_rng(3)
    labels = rng.integers(0, out.shape[-1], items).astype(np.int64)
    mask = rng.random(items) < 0.7
    mask.reshape(-1)[0] = True

    # The clipping threshold: half the global gradient norm at the exported
    # weights, so that the clamp acts from the first step on.
    t_labels = torch.from_numpy(labels)
    t_mask = torch.from_numpy(mask)
    masked_ce(out, t_labels, t_mask).backward()
    norm0 = math.sqrt(sum(float((p.grad.double() ** 2).sum())
                          for p in model.parameters() if p.grad is not None))
    model.zero_grad(set_to_none=True)
    clip = float(f"{0.5 * norm0:.3g}")

    # 2. The compiled run on that batch.
    data = os.path.join(args.work, "data")
    os.makedirs(data, exist_ok=True)
    for name, value in feeds.items():
        np.save(os.path.join(data, name + ".npy"), value)
    np.save(os.path.join(data, "labels.npy"), labels)
    np.save(os.path.join(data, "label_mask.npy"), mask)
    # The step's accuracy over the other items (no effect on training).
    np.save(os.path.join(data, "eval_mask.npy"), (~mask).astype(np.float32))
    exe = os.path.join(args.work, "train")
    recipe = (["--optimizer", "sgd", "--lr", str(args.lr), "--weight-decay",
               "0"] if args.recipe == "sgd" else
              ["--optimizer", "adamw", "--lr", str(args.lr), "--weight-decay",
               str(decay), "--lr-schedule", "cosine", "--warmup-steps",
               str(warmup), "--total-steps", str(args.steps),
               "--clip-grad-norm", str(clip)])
    subprocess.run([args.compiler, onnx_path, "--train", *recipe, "--loss",
                    "cross_entropy", "--emit=exe", "-o", exe], check=True)
    log = os.path.join(args.work, "log.jsonl")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--mode", "train", "--data", "npy:" + data,
                    "--steps", str(args.steps), "--log-json", log, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    losses = [json.loads(line).get("loss") for line in open(log)]

    # 3. The replay: same batch, same loss, the same torch.optim recipe.
    params = [p for p in model.parameters() if p.requires_grad]
    sched = None
    if args.recipe == "sgd":
        opt = torch.optim.SGD(params, lr=args.lr)
    else:
        opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=decay)

        def cosine(s):  # transformers' get_cosine_schedule_with_warmup
            if s < warmup:
                return s / max(1, warmup)
            p = (s - warmup) / max(1, args.steps - warmup)
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * p)))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine)
    clipped = 0
    worst = 0.0 if len(losses) == args.steps else float("inf")
    for t, ours in enumerate(losses[:args.steps], start=1):
        out = model(*inputs)
        out = out if isinstance(out, torch.Tensor) else out[0]
        loss = masked_ce(out, t_labels, t_mask)
        opt.zero_grad()
        loss.backward()
        if args.recipe == "adamw":
            clipped += float(torch.nn.utils.clip_grad_norm_(params, clip)) > clip
        opt.step()
        if sched is not None:
            sched.step()
        rel = (abs(ours - loss.item()) / max(abs(loss.item()), 1e-12)
               if ours is not None else float("inf"))
        if t in (1, args.steps) or rel > args.tolerance:
            print(f"  step {t}: compiled {ours} torch {loss.item():.8g} "
                  f"rel {rel:.2e}")
        worst = max(worst, rel)
    ok = worst <= args.tolerance
    if args.recipe == "adamw":
        print(f"  clip-grad-norm {clip:g}: clipped {clipped} of "
              f"{args.steps} steps")
    print(f"trajectory {args.entry} {args.style} {args.recipe}: "
          f"{len(losses)} steps, max "
          f"relative difference {worst:.2e} {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
