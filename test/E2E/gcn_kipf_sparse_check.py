#!/usr/bin/env python3
"""Kipf's GCN with its adjacency made sparse follows the dense build.

Compiles examples/gcn/dynamic/kipf.onnx (`adj_norm @ (x W)`, symbolic N)
for the nodes of a synthetic data set twice: dense (--input-shape
adj_norm=NxN: the driver fills D^-1/2 (A + I) D^-1/2 and the step
multiplies by it) and sparse (also --input-shape edge_index=2xE:
gt-sparse-adjacency replaces adj_norm by the edge list and each product by
gt.spmm). The sparse training step must have an edge_index [2, E] input,
no adj_norm and no [N, N] tensor, and aggregate with gt.spmm; trained STEPS
SGD steps from the same initial weights on the same data, every step's loss
must follow the dense run's to a relative --tolerance (1e-4). Each --plans
entry (mop=P, gp=P) is compiled sparse and run under `mpirun -np P`: it
must follow the one-process sparse run within the tolerance, with bytes
sent by every rank in every step. With --moa K, the sparse form compiled
with --plan moa=1,chunks=K must pipeline its aggregations with their
transforms and follow the one-process sparse run.

usage: gcn_kipf_sparse_check.py MEGAGRAPH_COMPILE WORKDIR [--plans mop=2,gp=2]
       [--moa K] [--data SPEC] [--steps 20] [--lr 0.1] [--tolerance 1e-4]
Prints one `check: NAME: DETAIL OK|FAIL` line per check; exits 1 on FAIL.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gcn_parallel_check import (GCN, add_run_arguments,  # noqa: E402
                                compile_exe, data_shapes,
                                pipelined_ops, train, worst)
from train_dp_check import Checks  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--plans", default="mop=2,gp=2")
    ap.add_argument("--moa", default="",
                    help="chunk count K: also --plan moa=1,chunks=K on one "
                         "process")
    add_run_arguments(ap)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    check = Checks()
    onnx_path = os.path.join(GCN, "dynamic", "kipf.onnx")
    n, e, f = data_shapes(args.data)
    dense_shapes = {"x": [n, f], "adj_norm": [n, n]}
    sparse_shapes = {**dense_shapes, "edge_index": [2, e]}

    # 1. The sparse training step: edge_index in, no N x N tensor.
    cmd = [args.compiler, onnx_path, "--train", "--optimizer", "sgd",
           "--lr", str(args.lr), "--loss", "cross_entropy", "--emit=gt"]
    for name, dims in sparse_shapes.items():
        cmd += ["--input-shape", name + "=" + "x".join(map(str, dims))]
    ir = subprocess.run(cmd, check=True, capture_output=True,
                        text=True).stdout
    main_sig = next((l for l in ir.splitlines() if "func.func @main" in l),
                    "")
    square = re.search(rf"\b{n}x{n}x", ir)
    good = (f'tensor<2x{e}xi64> {{gt.name = "edge_index"}}' in main_sig and
            "adj_norm" not in ir and not square)
    check("sparse step's inputs", good,
          f"edge_index [2, {e}], no adj_norm, "
          f"{'a' if square else 'no'} [{n}, {n}] tensor")
    spmms = ir.count("gt.spmm ")
    check("sparse step aggregates with gt.spmm", spmms >= 4,
          f"{spmms} gt.spmm (forward and backward), "
          f"{ir.count('gt.csr_transpose ')} gt.csr_transpose")

    # 2. Dense and sparse on one process, the same data and weights.
    losses = {}
    for kind, shapes in (("dense", dense_shapes), ("sparse", sparse_shapes)):
        exe = os.path.join(args.work, "train-" + kind)
        compile_exe(args.compiler, onnx_path, shapes, args.lr, "", exe)
        recs = train(exe, args.data, args.steps,
                     os.path.join(args.work, kind + ".jsonl"))
        losses[kind] = [r["loss"] for r in recs]
    d = worst(losses["sparse"], losses["dense"])
    check(f"sparse vs dense adj_norm (N={n}, E={e})", d <= args.tolerance,
          f"{len(losses['sparse'])} steps, max relative difference {d:.2e}")

    # 3. The mixture of accelerators on the sparse form: its aggregations
    #    next to transforms are pipelined as GCNConv's are.
    if args.moa:
        plan = f"moa=1,chunks={args.moa}"
        exe = os.path.join(args.work, "train-moa")
        compile_exe(args.compiler, onnx_path, sparse_shapes, args.lr, plan,
                    exe)
        agg_first, transform_first = pipelined_ops(
            args.compiler, onnx_path, sparse_shapes, args.lr, plan)
        check(f"{plan} pipelines", agg_first + transform_first > 0,
              f"{agg_first} gt.spmm_linear, {transform_first} gt.linear_spmm")
        recs = train(exe, args.data, args.steps,
                     os.path.join(args.work, "moa.jsonl"))
        d = worst([r["loss"] for r in recs], losses["sparse"])
        check(f"{plan} vs one process", d <= args.tolerance,
              f"{len(recs)} steps, max relative difference {d:.2e}")

    # 4. The node-splitting plans on the sparse form.
    for plan in filter(None, args.plans.split(",")):
        ranks = int(plan.split("=")[1])
        name = plan.replace("=", "")
        exe = os.path.join(args.work, "train-" + name)
        compile_exe(args.compiler, onnx_path, sparse_shapes, args.lr, plan,
                    exe)
        recs = train(exe, args.data, args.steps,
                     os.path.join(args.work, name + ".jsonl"), ranks=ranks)
        d = worst([r["loss"] for r in recs], losses["sparse"])
        check(f"{plan} vs one process", d <= args.tolerance,
              f"{len(recs)} steps, max relative difference {d:.2e}")
        sent = [r.get("comm_bytes", []) for r in recs]
        good = bool(sent) and all(len(s) == ranks and min(s) > 0
                                  for s in sent)
        check(f"{plan} comm_bytes", good,
              f"per rank, step 1: {sent[0] if sent else []}")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
