#!/usr/bin/env python3
"""Full-graph GCN training split over P ranks reproduces one process.

Compiles examples/gcn/dynamic/<model>.onnx (symbolic node and edge counts)
for the nodes and edges of a synthetic data set (--input-shape), trains it
STEPS SGD steps on one process with --dump-inputs, replays the same steps on
examples/gcn/gcn.py's module in PyTorch (the same initial weights, the
dumped graph, labels and mask), then compiles and trains it under each
--plan (mop=P: mixture of parallelism; gp=P: partition parallelism) with
`mpirun -np P`. Every step's loss must agree to a relative --tolerance
(1e-4) with PyTorch and with the one-process run, and the bytes the ranks
sent (comm_bytes, counted by the communication runtime) must be what the
plan model predicts (megagraph-compile --emit=plan with --graph-stats from
the executable's --mode graph-stats): mop's all-to-alls and gradient
all-reduce on every rank, gp's halo exchanges summed over the ranks (the
METIS halo of the data set), up to the few scalars the step also sums
(loss, counts: at most 16 floats a rank). With --moa K,..., the model is
also compiled with --plan moa=1,chunks=K (the mixture of accelerators: the
aggregations pipelined with their transforms over K row chunks, either
order) and run on one process; it must link both pipelined kernels, says
how many of each op its step has, and must follow the plain run: with
--reorder none (the data set's node order) and renumbered (the default
under moa: a locality order, which must ready more rows before the last
chunk, as the kernel's MEGAGRAPH_MOA_STATS=1 line counts them, and whose
dumped inputs, mapped back through --dump-inputs' node_order.npy, must be
the plain run's). With
--moa-plans gp=2,mop=2,..., each is also compiled with moa=1,chunks=K (K
the first of --moa; gp: every rank pipelines its row block, the halo
exchanged inside the pipelined kernels; mop: the aggregation, the switch
to row blocks and the transform pipelined chunk by chunk) and run under
mpirun: it must link its pipelined kernels, follow the one-process run,
send the bytes the plain plan sent (the same halo rows, or the same
switched rows in K all-to-alls) and the plan model predicts; their nodes
are renumbered (gp: within its METIS parts; mop: over its row blocks). Every gp run
is repeated with MEGAGRAPH_GP_OVERLAP=0 (the halo exchanged before the
aggregation rather than overlapped with its interior rows): the losses must
match bit for bit and the bytes exactly; and with MEGAGRAPH_GP_OVERLAP=check
(the halo rows NaN until the exchange is waited for): the losses must match
bit for bit (a row that read the halo too early would be NaN); plain gp's
MEGAGRAPH_GP_OVERLAP_STATS=1 must print one line per rank.

usage: gcn_parallel_check.py MEGAGRAPH_COMPILE WORKDIR --model gcn|sage
       [--plans mop=2,gp=2] [--moa 4,7] [--moa-plans gp=2,gp=4]
       [--data SPEC] [--steps 20] [--lr 0.1] [--tolerance 1e-4]
Prints one `check: NAME: DETAIL OK|FAIL` line per check; exits 1 on FAIL.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
GCN = os.path.join(HERE, "..", "..", "examples", "gcn")
sys.path.insert(0, GCN)
sys.path.insert(0, HERE)
import gcn  # noqa: E402
from train_dp_check import Checks, mpirun  # noqa: E402


def data_shapes(spec):
    """N, directed E and F of a synthetic:rmat spec (edges are undirected
    pairs, both directions stored)."""
    items = dict(kv.split("=") for kv in spec.split(",")[1:])
    n = int(items["nodes"])
    return n, 2 * int(items.get("edges", 8 * n)), int(items.get("features",
                                                               16))


def model_dims(path):
    """(features, hidden, classes) of an examples/gcn export."""
    g = onnx.load(path, load_external_data=False).graph
    feats = g.input[0].type.tensor_type.shape.dim[1].dim_value
    classes = g.output[0].type.tensor_type.shape.dim[1].dim_value
    return feats, classes


def compile_exe(compiler, onnx_path, shapes, lr, plan, exe,
                optimizer=("--optimizer", "sgd")):
    cmd = [compiler, onnx_path, "--train", *optimizer, "--lr", str(lr),
           "--loss", "cross_entropy", "--emit=exe", "-o", exe]
    for name, dims in shapes.items():
        cmd += ["--input-shape", name + "=" + "x".join(map(str, dims))]
    if plan:
        cmd += ["--plan", plan]
    subprocess.run(cmd, check=True)


def pipelined_ops(compiler, onnx_path, shapes, lr, plan):
    """How many gt.spmm_linear (aggregation first) and gt.linear_spmm
    (transform first) the training step compiled with `plan` has
    (megagraph-compile --emit=gt)."""
    cmd = [compiler, onnx_path, "--train", "--optimizer", "sgd", "--lr",
           str(lr), "--loss", "cross_entropy", "--emit=gt", "--plan", plan]
    for name, dims in shapes.items():
        cmd += ["--input-shape", name + "=" + "x".join(map(str, dims))]
    ir = subprocess.run(cmd, check=True, capture_output=True,
                        text=True).stdout
    return ir.count("gt.spmm_linear "), ir.count("gt.linear_spmm ")


def predict(compiler, onnx_path, shapes, plan, stats):
    """The plan model's prediction (megagraph-compile --emit=plan)."""
    cmd = [compiler, onnx_path, "--train", "--optimizer", "sgd", "--plan",
           plan, "--graph-stats", stats, "--emit=plan"]
    for name, dims in shapes.items():
        cmd += ["--input-shape", name + "=" + "x".join(map(str, dims))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["prediction"]


def train(exe, data, steps, log, ranks=1, extra=(), env=None):
    """The run's log records; with `env`, also its stderr."""
    if os.path.exists(log):
        os.remove(log)
    cmd = [exe, "--mode", "train", "--data", data, "--steps", str(steps),
           "--log-json", log, "--quiet", *extra]
    if ranks > 1:
        cmd = mpirun() + ["-np", str(ranks)] + cmd
    if env is None:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return [json.loads(line) for line in open(log)]
    out = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **env})
    return [json.loads(line) for line in open(log)], out.stderr


def worst(a, b):
    """The largest relative difference; inf for a loss that is not finite
    (max() would pass over a NaN)."""
    if len(a) != len(b) or not a:
        return float("inf")
    if not all(math.isfinite(x) and math.isfinite(y) for x, y in zip(a, b)):
        return float("inf")
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))


def add_run_arguments(ap):
    """The options every full-graph GCN check takes: the data set, the
    steps and learning rate, the relative loss tolerance."""
    ap.add_argument("--data",
                    default="synthetic:rmat,nodes=256,edges=1024,classes=8,"
                            "features=16,seed=3")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--tolerance", type=float, default=1e-4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--model", choices=["gcn", "sage"], required=True)
    ap.add_argument("--plans", default="mop=2,gp=2")
    add_run_arguments(ap)
    ap.add_argument("--moa", default="",
                    help="chunk counts K (comma-separated): --plan "
                         "moa=1,chunks=K on one process")
    ap.add_argument("--moa-plans", default="",
                    help="plans (comma-separated, gp=P or mop=P) also run with "
                         "moa=1,chunks=K, K the first of --moa")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    check = Checks()
    onnx_path = os.path.join(GCN, "dynamic", args.model + ".onnx")
    feats, classes = model_dims(onnx_path)
    n, e, f = data_shapes(args.data)
    shapes = {"x": [n, f], "edge_index": [2, e]}

    # 1. One process, its inputs dumped, and PyTorch on them.
    exe = os.path.join(args.work, "train1")
    compile_exe(args.compiler, onnx_path, shapes, args.lr, "", exe)
    dump = os.path.join(args.work, "dump")
    one = train(exe, args.data, args.steps, os.path.join(args.work, "one.jsonl"),
                extra=["--dump-inputs", dump])
    ours = [r["loss"] for r in one]
    step1 = os.path.join(dump, "step1")
    x = torch.from_numpy(np.load(os.path.join(step1, "x.npy"))).double()
    ei = torch.from_numpy(np.load(os.path.join(step1, "edge_index.npy")))
    labels = torch.from_numpy(np.load(os.path.join(step1, "labels.npy")))
    mask = torch.from_numpy(np.load(os.path.join(step1, "label_mask.npy")))
    model = gcn.build(args.model, feats, 32, classes).double()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    w = mask.double()
    ref = []
    for _ in range(args.steps):
        ce = nn.functional.cross_entropy(model(x, ei), labels,
                                         reduction="none")
        loss = (ce * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ref.append(loss.item())
    d = worst(ours, ref)
    check(f"one process vs PyTorch ({args.model}, N={n}, E={e})",
          d <= args.tolerance,
          f"{len(ours)} steps, max relative difference {d:.2e}")

    # The mixture of accelerators on one process: the aggregations run
    # through the pipelined kernel and follow the plain one-process run.
    for k in filter(None, args.moa.split(",")):
        plan = f"moa=1,chunks={k}"
        exe = os.path.join(args.work, f"train-moa{k}")
        compile_exe(args.compiler, onnx_path, shapes, args.lr, plan, exe)
        with open(exe, "rb") as fh:
            binary = fh.read()
        for kernel in ("mgrt_moa_spmm_linear_f32", "mgrt_moa_linear_spmm_f32"):
            calls = kernel.encode() in binary
            check(f"{plan} uses the pipelined kernel", calls,
                  kernel + (" linked" if calls else " absent"))
        agg_first, transform_first = pipelined_ops(
            args.compiler, onnx_path, shapes, args.lr, plan)
        check(f"{plan} pipelines", agg_first + transform_first > 0,
              f"{agg_first} gt.spmm_linear, {transform_first} gt.linear_spmm")
        # --reorder none: the data set's node order, as before the
        # renumbering (with K = 4 the plain run's losses bit for bit); the
        # default renumbers the nodes for the pipeline (the same losses up
        # to the order of float sums) and readies more rows before the last
        # chunk (the kernel's MEGAGRAPH_MOA_STATS=1 line).
        ready = {}
        renum_dump = os.path.join(args.work, f"dump-moa{k}")
        for name, extra in (("--reorder none", ["--reorder", "none"]),
                            ("renumbered", ["--dump-inputs", renum_dump])):
            tag = "none" if name != "renumbered" else "auto"
            recs, err = train(exe, args.data, args.steps,
                              os.path.join(args.work, f"moa{k}-{tag}.jsonl"),
                              extra=extra, env={"MEGAGRAPH_MOA_STATS": "1"})
            d = worst([r["loss"] for r in recs], ours)
            check(f"{plan} {name} vs one process", d <= args.tolerance,
                  f"{len(recs)} steps, max relative difference {d:.2e}")
            m = re.search(r"ready before the last chunk: \d+ \(([\d.]+)%\)",
                          err)
            ready[tag] = float(m.group(1)) if m else -1.0
        check(f"{plan} renumbering readies rows before the last chunk",
              ready["auto"] > ready["none"] >= 0,
              f"{ready['none']:.1f}% -> {ready['auto']:.1f}%")
        # node_order.npy (row k is the data set's node order[k]) maps the
        # renumbered run's inputs back onto the plain run's, every node
        # input row for row and edge_index edge for edge.
        order = np.load(os.path.join(renum_dump, "node_order.npy"))
        same = sorted(order.tolist()) == list(range(n))
        got = os.path.join(renum_dump, "step1")
        for t in ("x", "labels", "label_mask"):
            a = np.load(os.path.join(got, t + ".npy"))
            b = np.load(os.path.join(step1, t + ".npy"))
            same = same and np.array_equal(a, b[order])
        a = order[np.load(os.path.join(got, "edge_index.npy"))]
        b = ei.numpy()
        same = same and sorted(zip(*a.tolist())) == sorted(zip(*b.tolist()))
        check(f"{plan} renumbered inputs are the data set's through "
              "node_order.npy", same, "x, labels, label_mask, edge_index")
    if not args.plans and not args.moa_plans:
        return 0 if check.ok else 1

    # The graph as the plan model sees it.
    stats = os.path.join(args.work, "stats.json")
    all_plans = [p for p in args.plans.split(",") + args.moa_plans.split(",")
                 if p]
    parts = sorted({p.split("=")[1] for p in all_plans})
    subprocess.run([exe, "--mode", "graph-stats", "--data", args.data,
                    "--parts", ",".join(parts), "--log-json", stats,
                    "--quiet"], check=True)

    # 2. Each plan under mpirun; with --moa-plans, the same split with the
    #    accelerator pipeline on every rank.
    chunks = next(filter(None, args.moa.split(",")), "4")
    runs = [(p, p) for p in args.plans.split(",") if p]
    runs += [(p, f"{p},moa=1,chunks={chunks}")
             for p in args.moa_plans.split(",") if p]
    sent_by_plan, losses_by_plan = {}, {}
    for base, plan in runs:
        ranks = int(base.split("=")[1])
        name = plan.replace("=", "").replace(",", "-")
        exe = os.path.join(args.work, "train-" + name)
        compile_exe(args.compiler, onnx_path, shapes, args.lr, plan, exe)
        if plan != base:
            with open(exe, "rb") as fh:
                binary = fh.read()
            agg_first, transform_first = pipelined_ops(
                args.compiler, onnx_path, shapes, args.lr, plan)
            check(f"{plan} pipelines", agg_first + transform_first > 0,
                  f"{agg_first} gt.spmm_linear, {transform_first} "
                  "gt.linear_spmm")
            # The split's kernel of each pipelined order (gp: halo, mop:
            # across the layout switch).
            split = "mop" if base.startswith("mop") else "halo"
            for kernel, count in (
                    (f"mgrt_{split}_moa_spmm_linear_f32", agg_first),
                    (f"mgrt_{split}_moa_linear_spmm_f32", transform_first)):
                if not count:
                    continue
                calls = kernel.encode() in binary
                check(f"{plan} uses the pipelined kernel", calls,
                      kernel + (" linked" if calls else " absent"))
        recs = train(exe, args.data, args.steps,
                     os.path.join(args.work, name + ".jsonl"), ranks=ranks)
        d = worst([r["loss"] for r in recs], ours)
        check(f"{plan} vs one process", d <= args.tolerance,
              f"{len(recs)} steps, max relative difference {d:.2e}")
        sent = [r.get("comm_bytes", []) for r in recs]
        good = all(len(s) == ranks and min(s) > 0 and s == sent[0]
                   for s in sent)
        check(f"{plan} comm_bytes", good,
              f"per rank, every step: {sent[0] if sent else []}")
        sent_by_plan[plan] = sent[0] if sent else []
        losses_by_plan[plan] = [r["loss"] for r in recs]
        if plan != base and base in sent_by_plan:
            same = sent_by_plan[plan] == sent_by_plan[base]
            check(f"{plan} sends what {base} sends", same,
                  f"{sent_by_plan[plan]} vs {sent_by_plan[base]}")
            d = worst(losses_by_plan[plan], losses_by_plan[base])
            check(f"{plan} vs {base}", d <= args.tolerance,
                  f"{len(recs)} steps, max relative difference {d:.2e}")
        if base.startswith("gp"):
            # The halo exchange overlapped with the interior rows (the
            # default) vs exchange-then-aggregate: the same losses bit for
            # bit, the same bytes; the overlapped run's statistics.
            off, _ = train(exe, args.data, args.steps,
                           os.path.join(args.work, name + "-nooverlap.jsonl"),
                           ranks=ranks, env={"MEGAGRAPH_GP_OVERLAP": "0"})
            d = worst([r["loss"] for r in off], losses_by_plan[plan])
            check(f"{plan} overlap on vs off", d == 0,
                  f"{len(off)} steps, max relative difference {d:.2e}")
            same = [r.get("comm_bytes", []) for r in off] == sent
            check(f"{plan} overlap sends what no overlap sends", same,
                  f"{sent[0] if sent else []}")
            # The halo rows read NaN until the exchange is waited for: a
            # row that reads one too early (a boundary row taken for an
            # interior one, a missing wait) makes the losses NaN.
            early, _ = train(exe, args.data, args.steps,
                             os.path.join(args.work, name + "-check.jsonl"),
                             ranks=ranks,
                             env={"MEGAGRAPH_GP_OVERLAP": "check"})
            d = worst([r["loss"] for r in early], losses_by_plan[plan])
            check(f"{plan} overlap reads no halo row before it arrives",
                  d == 0, f"{len(early)} steps, max relative difference "
                  f"{d:.2e}")
        if plan == base and base.startswith("gp"):
            _, err = train(exe, args.data, 2,
                           os.path.join(args.work, name + "-stats.jsonl"),
                           ranks=ranks,
                           env={"MEGAGRAPH_GP_OVERLAP_STATS": "1"})
            lines = [l for l in err.splitlines()
                     if l.startswith("megagraph gp: rank")]
            check(f"{plan} overlap statistics", len(lines) == ranks,
                  lines[0] if lines else "no statistics line")
        predicted = predict(args.compiler, onnx_path, shapes, plan, stats)
        slack = 16 * 4
        if plan.startswith("mop"):
            want = predicted["comm_bytes_per_rank"]
            good = all(0 <= s - want <= slack for s in sent[0])
            detail = f"each rank {sent[0][0]} bytes, predicted {want:.0f}"
        else:
            want = predicted["comm_bytes_total"]
            good = 0 <= sum(sent[0]) - want <= slack * ranks
            detail = f"total {sum(sent[0])} bytes, predicted {want:.0f}"
        check(f"{plan} traffic as modelled", good, detail)
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
