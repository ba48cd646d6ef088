#!/usr/bin/env python3
"""Training the graphgps and plain_gt examples (examples/models/*/model.onnx
as committed) with the compiled training step (`megagraph-compile --train
--optimizer adamw`).

  graphgps  inputs x and adj_norm, which the runtime driver computes, so it
            trains with `--mode train` on synthetic:sbm; the loss must halve
            and the test accuracy (eval_correct over the labelled nodes
            outside the train mask, as the driver logs it) of the last 10
            steps must reach 90%.
  plain_gt  its Laplacian positional encoding `pe` is not a driver input,
            so it trains on the example's own batch (inputs/*.npy, random
            labels, 70% label mask) with `--mode infer --repeat K`: every
            call is one training step, state persists within the process;
            the loss after K steps must be below a third of the first.

usage: train_examples_check.py MEGAGRAPH_COMPILE WORKDIR graphgps|plain_gt
Prints lines ending in OK or FAIL; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "examples", "models")


def graphgps(compiler, work):
    exe = os.path.join(work, "train")
    subprocess.run([compiler, os.path.join(EXAMPLES, "graphgps", "model.onnx"),
                    "--train", "--optimizer", "adamw", "--lr", "0.003",
                    "--emit=exe", "-o", exe], check=True)
    log = os.path.join(work, "log.jsonl")
    data = "synthetic:sbm,nodes=2048,classes=4,features=8,signal=3,seed=5"
    subprocess.run([exe, "--mode", "train", "--data", data, "--steps", "150",
                    "--log-json", log, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    first = sum(r["loss"] for r in records[:10]) / 10
    last = sum(r["loss"] for r in records[-10:]) / 10
    tests = [r["test_accuracy"] for r in records[-10:]
             if r.get("test_accuracy") is not None]
    test = sum(tests) / len(tests) if tests else float("nan")
    ok_loss = len(records) == 150 and last < 0.5 * first
    ok_test = len(tests) == 10 and test >= 0.9
    print(f"graphgps loss: first {first:.3f} last {last:.3f} "
          f"{'OK' if ok_loss else 'FAIL'}")
    print(f"graphgps test accuracy: {test:.3f} {'OK' if ok_test else 'FAIL'}")
    return ok_loss and ok_test


def plain_gt(compiler, work, steps=40):
    folder = os.path.join(EXAMPLES, "plain_gt")
    inputs = {f[:-4]: os.path.join(folder, "inputs", f)
              for f in sorted(os.listdir(os.path.join(folder, "inputs")))}
    shapes = []
    for name, path in inputs.items():
        shape = np.load(path).shape
        shapes += ["--input-shape", f"{name}={'x'.join(map(str, shape))}"]
    exe = os.path.join(work, "train")
    subprocess.run([compiler, os.path.join(folder, "model.onnx"), "--train",
                    "--optimizer", "adamw", "--lr", "0.003", "--emit=exe",
                    "-o", exe] + shapes, check=True)
    b, s = np.load(inputs["x"]).shape[:2]
    rng = np.random.default_rng(0)
    mask = rng.random((b, s)) < 0.7
    extra = {"labels": rng.integers(0, 4, (b, s)).astype(np.int64),
             "label_mask": mask, "eval_mask": (~mask).astype(np.float32)}
    for name, value in extra.items():
        inputs[name] = os.path.join(work, name + ".npy")
        np.save(inputs[name], value)
    losses = []
    for k in (1, steps):
        out = os.path.join(work, f"out{k}")
        cmd = [exe, "--mode", "infer", "--quiet", "--repeat", str(k),
               "--output-dir", out]
        for name, path in inputs.items():
            cmd += ["--input", f"{name}={path}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        losses.append(float(np.load(os.path.join(out, "loss.npy"))))
    ok = np.isfinite(losses).all() and losses[1] < losses[0] / 3
    print(f"plain_gt loss: step 1 {losses[0]:.3f} step {steps} "
          f"{losses[1]:.3f} {'OK' if ok else 'FAIL'}")
    return ok


def main():
    compiler, work, which = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    ok = graphgps(compiler, work) if which == "graphgps" else plain_gt(
        compiler, work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
