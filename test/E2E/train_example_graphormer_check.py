#!/usr/bin/env python3
"""Training the Graphormer example (examples/models/graphormer/model.onnx as
committed, the README's main job) with the compiled training step:
categorical node features (3 columns of 16 values with Graphormer's
single-embedding offsets), in/out-degree embeddings and an SPD spatial bias
over 7 hops, 4 classes. The runtime driver builds every input from
synthetic:sbm: the float SBM features quantized into --categories bins,
degrees, SPD per sequence, labels and masks. After 200 AdamW steps the loss
must have halved and the accuracy of the last 20 steps must reach 90% on
the training nodes and, when the step reports it, on the test nodes.

usage: train_example_graphormer_check.py MEGAGRAPH_COMPILE WORKDIR
Prints lines ending in OK or FAIL; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "examples", "models", "graphormer", "model.onnx")


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    exe, log = os.path.join(work, "graphormer-train"), os.path.join(
        work, "log.jsonl")
    subprocess.run([compiler, EXAMPLE, "--train", "--optimizer", "adamw",
                    "--lr", "0.003", "--emit=exe", "-o", exe], check=True)
    subprocess.run([exe, "--mode", "train", "--data",
                    "synthetic:sbm,nodes=4096,classes=4,features=3,signal=3",
                    "--categories", "16", "--max-distance", "7", "--steps",
                    "200", "--log-json", log, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    ok = True

    def report(what, good, text):
        nonlocal ok
        ok &= good
        print(f"{what}: {text} {'OK' if good else 'FAIL'}")

    report("records", len(records) == 200, str(len(records)))
    first = records[0]["loss"]
    last = sum(r["loss"] for r in records[-20:]) / 20
    report("loss", last < first / 2, f"first {first:.4f} last-20 {last:.4f}")
    acc = sum(r["accuracy"] for r in records[-20:]) / 20
    report("train accuracy", acc >= 0.9, f"{acc:.3f}")
    tests = [r["test_accuracy"] for r in records[-20:]
             if r.get("test_accuracy") is not None]
    if tests:
        t = sum(tests) / len(tests)
        report("test accuracy", t >= 0.9, f"{t:.3f}")
    else:
        print("test accuracy: not reported by this step")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
