#!/usr/bin/env python3
"""Full-graph GCN training: mixture of parallelism (mop) against partition
parallelism (gp) and PyTorch, side by side in one run.

For each graph (a power-law R-MAT graph and an SBM of the same size) the
PyG-style GCN of examples/gcn/gcn.py (exported with symbolic node and edge
counts, LAYERS layers, HIDDEN hidden features) is compiled for the graph
and trained STEPS SGD steps on one process and under `mpirun -np P` with
--plan mop=P and gp=P for every P in RANKS (oversubscribed when P exceeds
the cores). From the per-step JSON logs it reports

  comm_bytes  the bytes each rank sent in a step (counted by the
              communication runtime at every call: the measured traffic,
              not a model), total over the ranks and the largest rank's;
  step time   the mean of steps 2..STEPS (wall clock; on an oversubscribed
              2-core machine this is dominated by the sharing);
  peak        the largest rank's peak tracked memory (peak_bytes).

PyTorch (the same module, eager, float32, scatter_add message passing on
the same inputs, dumped by the one-process run) gives one-process step time
and peak resident memory. Writes a markdown report (command, machine load,
tables).

usage: /opt/torch-venv/bin/python bench/gcn_bench.py --build build
       [--nodes 262144] [--edges 2097152] [--features 64] [--hidden 128]
       [--classes 16] [--layers 2] [--ranks 1,2,4,8] [--steps 4]
       [--graphs rmat,sbm] [--no-torch] [--out bench/results/DATE-cpu-gcn.md]
       [--model gcn|sage] [--moa K,... [--repeats 3] [--reorder none,auto]]

With --moa, the mixture of accelerators instead: one process without and
with --plan moa=1,chunks=K for each K, the executables run in turn
(--repeats rounds), median step times and the speed-up over "off"; each
moa plan runs with every value of --reorder (the driver's node
renumbering; default auto, the driver's default).
"""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PY = "/opt/torch-venv/bin/python"


def mpirun(ranks):
    cmd = [shutil.which("mpirun"), "--oversubscribe", "--mca", "btl",
           "self,vader"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + ["-np", str(ranks)]


def sh(cmd, **kw):
    print("[bench] " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
    return subprocess.run(cmd, **kw)


def export(args, path):
    if os.path.exists(path):
        return
    d = os.path.dirname(path)
    sh([TORCH_PY, os.path.join(ROOT, "examples", "gcn", "gcn.py"), d,
        "--models", args.model, "--dynamo", "--dynamic", "--features",
        str(args.features), "--hidden", str(args.hidden), "--classes",
        str(args.classes), "--layers", str(args.layers)],
       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def spec(args, graph):
    if graph == "rmat":
        return (f"synthetic:rmat,nodes={args.nodes},edges={args.edges},"
                f"classes={args.classes},features={args.features},seed=1")
    degree = 2 * args.edges / args.nodes
    return (f"synthetic:sbm,nodes={args.nodes},classes={args.classes},"
            f"features={args.features},degree={degree:g},seed=1")


def compile_exe(args, model, shapes, plan, exe):
    cmd = [os.path.join(args.build, "bin", "megagraph-compile"), model,
           "--train", "--optimizer", "sgd", "--lr", "0.1", "--emit=exe",
           "-o", exe]
    for name, dims in shapes.items():
        cmd += ["--input-shape", name + "=" + "x".join(map(str, dims))]
    if plan:
        cmd += ["--plan", plan]
    sh(cmd, check=True)


def directed_edges(args, model, data, work):
    """The data set's directed edge count, from the driver's shape error of
    a model compiled for a placeholder count."""
    exe = os.path.join(work, "probe")
    compile_exe(args, model, {"x": [args.nodes, args.features],
                              "edge_index": [2, 2]}, "", exe)
    r = subprocess.run([exe, "--mode", "train", "--data", data, "--steps", "1",
                        "--quiet"], capture_output=True, text=True)
    m = re.search(r"--input-shape edge_index=2x(\d+)", r.stderr)
    if not m:
        sys.exit("cannot read the edge count: " + r.stderr)
    return int(m.group(1))


def run_plan(args, exe, data, ranks, log, extra=()):
    if os.path.exists(log):
        os.remove(log)
    cmd = [exe, "--mode", "train", "--data", data, "--steps",
           str(args.steps), "--log-json", log, "--quiet", *extra]
    # Every rank under /usr/bin/time: its peak resident memory.
    cmd = ["/usr/bin/time", "-f", "maxrss_kib %M"] + cmd
    if ranks > 1:
        cmd = mpirun(ranks) + cmd
    t = time.time()
    r = sh(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit(r.stderr + f"failed with exit status {r.returncode}")
    err = r.stderr
    rss = sorted(int(k) * 1024 for k in re.findall(r"maxrss_kib (\d+)", err))
    recs = [json.loads(line) for line in open(log)]
    timed = recs[1:] or recs
    comm = recs[-1].get("comm_bytes", [0])
    peaks = [max(r["peak_bytes"][i] for r in recs)
             for i in range(len(recs[0]["peak_bytes"]))]
    return {
        "comm_ranks": comm,
        "peak_ranks": peaks,
        "step_s": sum(r["step_time_s"] for r in timed) / len(timed),
        "comm_total": sum(comm),
        "comm_max": max(comm),
        "peak_max": max(peaks),
        "loss": [r["loss"] for r in recs],
        "wall_s": time.time() - t,
        "maxrss": max(rss),
        "rss_ranks": rss,
        "stderr": err,
    }


TORCH_STEP = r"""
import json, os, resource, sys, time
import numpy as np, torch
sys.path.insert(0, os.path.join(sys.argv[1], "examples", "gcn"))
import gcn
dump, steps, layers, hidden = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(int(os.environ.get("THREADS", "2")))
load = lambda n: torch.from_numpy(np.load(os.path.join(dump, n)))
x, ei = load("x.npy"), load("edge_index.npy")
labels, mask = load("labels.npy"), load("label_mask.npy").float()
model = gcn.build("gcn", x.shape[1], hidden, int(labels.max()) + 1, layers=layers)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
times, losses = [], []
for _ in range(steps):
    t = time.perf_counter()
    ce = torch.nn.functional.cross_entropy(model(x, ei), labels, reduction="none")
    loss = (ce * mask).sum() / mask.sum()
    opt.zero_grad(); loss.backward(); opt.step()
    times.append(time.perf_counter() - t); losses.append(loss.item())
print(json.dumps({"times": times, "losses": losses,
                  "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def run_torch(args, dump, classes):
    r = sh([TORCH_PY, "-c", TORCH_STEP, ROOT, dump, str(args.steps),
            str(args.layers), str(args.hidden)], check=True,
           capture_output=True, text=True,
           env=dict(os.environ, THREADS=str(args.threads)))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    timed = out["times"][1:] or out["times"]
    return {"step_s": sum(timed) / len(timed), "maxrss": out["maxrss"],
            "loss": out["losses"]}


def mib(b):
    return f"{b / 2**20:,.1f}"


def per_rank(values):
    return " / ".join(f"{v / 2**20:.1f}" for v in values)


def uptime():
    return subprocess.run(["uptime"], capture_output=True,
                          text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nodes", type=int, default=1 << 18)
    ap.add_argument("--edges", type=int, default=1 << 21)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--graphs", default="rmat,sbm")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=None)
    ap.add_argument("--no-torch", action="store_true",
                    help="skip the PyTorch side (its E x hidden message "
                    "tensors do not fit a 1M-node graph on a small machine)")
    ap.add_argument("--model", choices=["gcn", "sage"], default="gcn")
    ap.add_argument("--moa", default="",
                    help="chunk counts K: instead of the P table, time one "
                    "process without and with --plan moa=1,chunks=K, "
                    "alternating them --repeats times")
    ap.add_argument("--reorder", default="auto",
                    help="with --moa: the driver's --reorder values each moa "
                    "plan runs with (comma-separated: none,auto)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(
        ROOT, "bench", "results", time.strftime("%Y-%m-%d") + "-cpu-gcn.md"))
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    work = args.work or os.path.join(args.build, "bench-work", "gcn")
    os.makedirs(work, exist_ok=True)
    os.environ["MEGAGRAPH_NUM_THREADS"] = str(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    load_before = os.getloadavg()
    uptime_before = uptime()
    started = time.time()
    model = os.path.join(work, f"L{args.layers}_h{args.hidden}",
                         args.model + ".onnx")
    export(args, model)
    if args.moa:
        return moa_main(args, work, model, load_before, uptime_before,
                        started)
    ranks = [int(r) for r in args.ranks.split(",")]
    rows, torch_rows = [], []
    for graph in args.graphs.split(","):
        data = spec(args, graph)
        e = directed_edges(args, model, data, work)
        shapes = {"x": [args.nodes, args.features], "edge_index": [2, e]}
        gwork = os.path.join(work, graph)
        os.makedirs(gwork, exist_ok=True)
        base = None
        for p in ranks:
            plans = [""] if p == 1 else [f"mop={p}", f"gp={p}"]
            for plan in plans:
                name = plan.replace("=", "") or "one"
                exe = os.path.join(gwork, name)
                compile_exe(args, model, shapes, plan, exe)
                extra = []
                if not plan and not args.no_torch:
                    extra = ["--dump-inputs", os.path.join(gwork, "dump")]
                r = run_plan(args, exe, data, p,
                             os.path.join(gwork, name + ".jsonl"), extra)
                if not plan:
                    base = r
                dev = max(abs(a - b) / max(abs(b), 1e-12)
                          for a, b in zip(r["loss"], base["loss"]))
                rows.append((graph, e, plan or "one process", p, r, dev))
        if args.no_torch:
            continue
        t = run_torch(args, os.path.join(gwork, "dump", "step1"), args.classes)
        dev = max(abs(a - b) / max(abs(b), 1e-12)
                  for a, b in zip(base["loss"], t["loss"]))
        torch_rows.append((graph, e, base, t, dev))
    load_after = os.getloadavg()
    uptime_after = uptime()

    cmd = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT)]
                   + sys.argv[1:])
    lines = [
        f"# Full-graph GCN: mop vs gp vs PyTorch ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `{TORCH_PY} {cmd}` ({time.time() - started:.0f} s).",
        f"Machine: {os.cpu_count()} cores, shared; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after. "
        f"MEGAGRAPH_NUM_THREADS={args.threads} per rank; P ranks run "
        "oversubscribed on the 2 cores, so step times above P = 1 mostly "
        "measure the sharing, not the plans.",
        "",
        f"`uptime` before: `{uptime_before}`; after: `{uptime_after}`.",
        "",
        f"Model: examples/gcn/gcn.py PyG-style GCN, {args.layers} layers, "
        f"{args.features} input features, hidden {args.hidden}, "
        f"{args.classes} classes, SGD; N = {args.nodes:,} nodes; "
        f"{args.steps} steps, times averaged over steps 2..{args.steps}.",
        "",
        "comm_bytes is what each rank sent in one step, counted by the "
        "communication runtime at every call (megagraph/Comm.h): the "
        "all-to-alls of mop, the halo exchanges of gp, and the gradient "
        "all-reduce of both. peak is each rank's peak tracked memory "
        "(the runtime-tracked allocations, mgrt_peak_bytes), RSS each "
        "rank's peak resident memory (/usr/bin/time), smallest first.",
        "",
        "| graph | directed edges | plan | P | comm total MiB/step | "
        "comm per rank MiB/step | step s | peak per rank MiB | "
        "RSS per rank MiB | max rel. loss diff vs one process |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for graph, e, plan, p, r, dev in rows:
        lines.append(f"| {graph} | {e:,} | {plan} | {p} | "
                     f"{mib(r['comm_total'])} | {per_rank(r['comm_ranks'])} | "
                     f"{r['step_s']:.3f} | {per_rank(r['peak_ranks'])} | "
                     f"{per_rank(r['rss_ranks'])} | {dev:.1e} |")
    if args.no_torch:
        lines += ["", "PyTorch not run (--no-torch)."]
    else:
        lines += ["", "One process against PyTorch "
                  f"{subprocess.run([TORCH_PY, '-c', 'import torch; print(torch.__version__)'], capture_output=True, text=True).stdout.strip()} "
                  "(eager, the same module and inputs, "
                  f"{args.threads} threads):", "",
                  "| graph | MegaGraph step s | PyTorch step s | speed-up | "
                  "MegaGraph peak RSS MiB | PyTorch peak RSS MiB | "
                  "max rel. loss diff |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for graph, e, base, t, dev in torch_rows:
            lines.append(f"| {graph} | {base['step_s']:.3f} | {t['step_s']:.3f} | "
                         f"{t['step_s'] / base['step_s']:.2f}x | "
                         f"{mib(base['maxrss'])} | {mib(t['maxrss'])} | "
                         f"{dev:.1e} |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def moa_main(args, work, model, load_before, uptime_before, started):
    """One process without and with the mixture of accelerators, the
    executables run in turn (off, moa K1, moa K2, ..., off, ...) so that
    the machine's load drifts over all of them alike."""
    chunks = [int(k) for k in args.moa.split(",")]
    # The transform-first kernel prints, at its first call, how many output
    # rows wait for each chunk of the transformed rows.
    os.environ["MEGAGRAPH_MOA_STATS"] = "1"
    lines_rows = []
    for graph in args.graphs.split(","):
        data = spec(args, graph)
        e = directed_edges(args, model, data, work)
        shapes = {"x": [args.nodes, args.features], "edge_index": [2, e]}
        gwork = os.path.join(work, f"moa-{args.model}-{graph}")
        os.makedirs(gwork, exist_ok=True)
        # Each moa plan with each --reorder value (the driver's node
        # renumbering: "none" keeps the data set's order), one executable.
        variants = [("off", "", ())]
        for k in chunks:
            for how in args.reorder.split(","):
                name = f"moa=1,chunks={k}" + (
                    "" if how == "auto" else f" --reorder {how}")
                variants.append((name, f"moa=1,chunks={k}",
                                 ("--reorder", how)))
        exes, compiled = {}, set()
        for name, plan, _ in variants:
            exes[name] = os.path.join(gwork, plan.replace("=", "").replace(
                ",", "-") or "off")
            if plan not in compiled:
                compile_exe(args, model, shapes, plan, exes[name])
                compiled.add(plan)
        times = {name: [] for name, _, _ in variants}
        losses, ready = {}, {}
        for rep in range(args.repeats):
            for name, _, extra in variants:
                tag = name.replace(" ", "").replace("--reorder", "-")
                r = run_plan(args, exes[name], data, 1,
                             os.path.join(gwork, f"{rep}-{tag}.jsonl"),
                             extra)
                times[name].append(r["step_s"])
                losses[name] = r["loss"]
                m = re.search(r"ready before the last chunk: \d+ "
                              r"\(([\d.]+)%\)", r["stderr"])
                ready[name] = f"{m.group(1)}%" if m else "-"
        off = sorted(times["off"])[len(times["off"]) // 2]
        for name, _, _ in variants:
            med = sorted(times[name])[len(times[name]) // 2]
            dev = max(abs(a - b) / max(abs(b), 1e-12)
                      for a, b in zip(losses[name], losses["off"]))
            lines_rows.append(
                f"| {graph} | {e:,} | {name} | "
                + " / ".join(f"{t:.3f}" for t in times[name])
                + f" | {med:.3f} | {off / med:.2f}x | {dev:.1e} | "
                f"{ready[name]} |")
    load_after = os.getloadavg()
    cmd = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT)]
                   + sys.argv[1:])
    lines = [
        f"# Full-graph {args.model}: mixture of accelerators on vs off "
        f"({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `{TORCH_PY} {cmd}` ({time.time() - started:.0f} s).",
        f"Machine: {os.cpu_count()} cores, shared; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; "
        f"`uptime` before: `{uptime_before}`; after: `{uptime()}`. "
        f"MEGAGRAPH_NUM_THREADS={args.threads}.",
        "",
        f"Model: examples/gcn/gcn.py {args.model}, {args.layers} layers, "
        f"{args.features} input features, hidden {args.hidden}, "
        f"{args.classes} classes, SGD; N = {args.nodes:,} nodes; one "
        f"process; {args.steps} steps per run, step time = mean of steps "
        f"2..{args.steps}; the variants run in turn, {args.repeats} rounds.",
        "",
        "Ready early: the share of the transform-first aggregation's "
        "output rows whose neighbours (self loop included) all lie before "
        "the last of the K chunks of transformed rows, i.e. that can be "
        "aggregated while the last chunk is transformed "
        "(MEGAGRAPH_MOA_STATS=1).",
        "",
        "| graph | directed edges | plan | step s per round | median | "
        "speed-up vs off | max rel. loss diff vs off | ready early |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ] + lines_rows
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
