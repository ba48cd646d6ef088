#!/usr/bin/env python3
"""Context parallelism end to end: the same PyTorch model (same
weights) is exported once at the global batch B (one process) and once at
B / dp (each dp replica's batch), compiled with `--train` and with
`--train --plan cp=C,cp_mode=M[,dp=P]`, and trained on the same synthetic
SBM for 20 steps, alone and under `mpirun -np P*C`. In the cp run each rank
holds S / C nodes of every sequence (its METIS block) and the attention
meets the other blocks' keys by all-gather or around a ring, or (Ulysses)
moves q, k, v and the bias rows to all S rows of H / C heads by
all-to-all and the output back. When C does
not divide S (cp=3 with S = 32) the blocks are uneven, 11, 11 and 10
nodes: every rank's program has ceil(S / C) rows and a shorter block's
last row is padding. The cp run
must reproduce the one-process run: every step's loss within 1e-4
relative, the same accuracy, one peak_bytes entry per rank. The compiled
cp program must also have the per-rank shapes ([B, S/C, F] features,
[B, S/C, S] distances) and the cp attention calls in its LLVM IR.

usage: train_cp_check.py MEGAGRAPH_COMPILE WORKDIR --model graphormer|plain|mha
           --cp C [--dp P] [--mode allgather|ring|ulysses]
           [--optimizer sgd|adamw]
           [--lr X] [--global-batch B] [--zero 0|1|2|3]
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_dp_check as tdp  # noqa: E402  (mpirun)
import train_graphormer_check as tg  # noqa: E402  (Graphormer)

STEPS = 20


class PlainAttention(nn.Module):
    """Multi-head self-attention without a bias (a plain graph transformer
    sees the graph only through the sequence it is given)."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(tg.D, tg.D), nn.Linear(tg.D, tg.D)
        self.v, self.o = nn.Linear(tg.D, tg.D), nn.Linear(tg.D, tg.D)

    def forward(self, x):
        b, s, d = x.shape
        h = tg.H
        q = self.q(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(x).view(b, s, h, d // h).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.o(out)


class PlainLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.att = nn.LayerNorm(tg.D), PlainAttention()
        self.n2 = nn.LayerNorm(tg.D)
        self.ffn = nn.Sequential(nn.Linear(tg.D, 2 * tg.D), nn.GELU(),
                                 nn.Linear(2 * tg.D, tg.D))

    def forward(self, x):
        x = x + self.att(self.n1(x))
        return x + self.ffn(self.n2(x))


class PlainGT(nn.Module):
    """Plain GT: node encoder, two pre-LN transformer layers, a head."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(tg.F, tg.D)
        self.layers = nn.ModuleList([PlainLayer(), PlainLayer()])
        self.norm, self.head = nn.LayerNorm(tg.D), nn.Linear(tg.D, tg.C)

    def forward(self, x):
        h = self.enc(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h))


class MhaGT(nn.Module):
    """plain_gt-style (examples/models/plain_gt.py): stock
    nn.TransformerEncoder (nn.MultiheadAttention: packed q/k/v projection,
    sequence-first head reshapes and transposes), an ALiBi-style distance
    bias passed as the float mask, no dropout."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(tg.F, tg.D)
        self.slopes = nn.Parameter(torch.tensor([1.0, 0.5, 0.25, 0.125])[:tg.H])
        layer = nn.TransformerEncoderLayer(
            d_model=tg.D, nhead=tg.H, dim_feedforward=2 * tg.D, dropout=0.0,
            activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2,
                                             enable_nested_tensor=False)
        for m in self.encoder.modules():
            if isinstance(m, nn.MultiheadAttention):
                m._reset_parameters()
            elif isinstance(m, nn.Linear):
                m.reset_parameters()
        self.head = nn.Linear(tg.D, tg.C)

    def forward(self, x, spd):
        s = spd.shape[-1]
        bias = -self.slopes.view(1, -1, 1, 1) * spd.unsqueeze(1).to(x.dtype)
        h = self.encoder(self.enc(x), mask=bias.reshape(-1, s, s))
        return self.head(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("work")
    ap.add_argument("--model", choices=["graphormer", "plain", "mha"],
                    default="graphormer")
    ap.add_argument("--cp", type=int, default=2)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--mode", choices=["allgather", "ring", "ulysses"],
                    default="allgather")
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--lr", default="0.1")
    ap.add_argument("--global-batch", type=int, default=2)
    ap.add_argument("--zero", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    model = {"graphormer": tg.Graphormer, "plain": PlainGT,
             "mha": MhaGT}[args.model]()
    B, P, C = args.global_batch, args.dp, args.cp
    assert B % P == 0
    plan = f"cp={C},cp_mode={args.mode}" + (f",dp={P}" if P > 1 else "")
    if args.zero:
        plan += f",zero={args.zero}"
    train = ["--train", "--optimizer", args.optimizer, "--lr", args.lr,
             "-O0"]
    exes, irs = {}, {}
    for name, batch, extra in (("single", B, []),
                               ("cp", B // P, ["--plan", plan])):
        onnx_path = os.path.join(args.work, f"{name}.onnx")
        tdp.export(model, args.model, batch, onnx_path)
        exes[name] = os.path.join(args.work, name)
        subprocess.run([args.compiler, onnx_path, *train, *extra,
                        "--emit=exe", "-o", exes[name]], check=True)
        if args.zero:
            irs[name + ".gt"] = subprocess.run(
                [args.compiler, onnx_path, *train, *extra, "--emit=gt",
                 "--mlir-elide-elementsattrs-if-larger=1"], check=True,
                capture_output=True, text=True).stdout
        if name == "cp":
            irs["gt"] = subprocess.run(
                [args.compiler, onnx_path, *train, *extra, "--emit=gt",
                 "--mlir-elide-elementsattrs-if-larger=1"], check=True,
                capture_output=True, text=True).stdout
            irs["llvm"] = subprocess.run(
                [args.compiler, onnx_path, *train, *extra, "--emit=llvm"],
                check=True, capture_output=True, text=True).stdout
    if args.mode == "ulysses" and tg.S % C == 0:
        # The same cp program with the all-gather, for comm_bytes below.
        plan_ag = plan.replace("cp_mode=ulysses", "cp_mode=allgather")
        exes["ag"] = os.path.join(args.work, "ag")
        subprocess.run([args.compiler, os.path.join(args.work, "cp.onnx"),
                        *train, "--plan", plan_ag, "--emit=exe", "-o",
                        exes["ag"]], check=True)
    data = (f"synthetic:sbm,nodes=2048,classes={tg.C},features={tg.F},"
            "signal=3,seed=3")
    run = ["--mode", "train", "--data", data, "--steps", str(STEPS),
           "--quiet"]
    logs = {}
    for name, prefix in (("single", []),
                         ("cp", tdp.mpirun() + ["-np", str(P * C)])):
        logs[name] = os.path.join(args.work, f"{name}.jsonl")
        if os.path.exists(logs[name]):
            os.remove(logs[name])
        subprocess.run(prefix + [exes[name], *run, "--log-json", logs[name]],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
    # The cp blocks are METIS parts of each sequence: far fewer of the
    # sequence's edges cross blocks than the 1 - 1/C of a random split.
    r = subprocess.run(tdp.mpirun() + ["-np", str(P * C), exes["cp"],
                                       "--mode", "train", "--data", data,
                                       "--steps", "1"],
                       capture_output=True, text=True, timeout=300)
    m = re.search(r"cp blocks of (\d+)(?: to (\d+))? nodes \(METIS\) cut "
                  r"([0-9.]+)%", r.stderr)
    blockCut = float(m.group(3)) if m else float("nan")
    randomCut = 100.0 * (1 - 1 / C)
    single = [json.loads(l) for l in open(logs["single"])]
    cp = [json.loads(l) for l in open(logs["cp"])]
    check = tdp.Checks()

    # The per-rank program: S / C rows (ceil(S / C) when C does not divide
    # S: uneven blocks of S // C or one more rows, padded), all S key
    # columns of the distances.
    R = -(-tg.S // C)
    shapes = [f"tensor<{B // P}x{R}x{tg.F}xf32> {{gt.name = \"x\"}}"]
    if tg.S % C:
        # The blocks' sequence length travels with the cp attentions.
        shapes.append(f"seq = {tg.S}>")
    if args.model in ("graphormer", "mha"):
        shapes.append(f"tensor<{B // P}x{R}x{tg.S}xi64> {{gt.name = \"spd\"}}")
    check("shapes", all(s in irs["gt"] for s in shapes), ", ".join(shapes))
    # Calls of the kernels' MLIR wrappers, one per attention: the dense
    # cp kernels, or with Graphormer's spatial bias the spatial ones.
    def calls(pattern):
        return len(re.findall(r"call void @" + pattern + r"\(", irs["llvm"]))
    spatialFwd = calls("mgrt_cp_attention_spatial_f32")
    spatialBwd = calls("mgrt_cp_attention_spatial_bwd_f32")
    fwd = calls("mgrt_cp_attention_f32") + spatialFwd
    bwd = calls("mgrt_cp_attention_bwd_f32") + spatialBwd
    plain = calls("mgrt_attention_(bwd_|spatial_|spatial_bwd_)?f32")
    check("cp attention calls", fwd == 2 and bwd == 2 and plain == 0,
          f"{fwd} forward, {bwd} backward, {plain} single-process")
    # Graphormer's spatial bias is read in place (gt-fuse-spatial-bias
    # under cp): the cp kernels read the rank's [B, S/C, S] distance rows
    # and the table; no [B, H, S/C, S] bias (or gradient) in the step.
    dense = f"tensor<{B // P}x{tg.H}x{R}x{tg.S}xf32>"
    if args.model == "graphormer":
        check("spatial bias", spatialFwd == 2 and spatialBwd == 2 and
              dense not in irs["gt"] and "gt.spatial_bias" not in irs["gt"],
              f"read in place: {spatialFwd} forward, {spatialBwd} backward "
              f"spatial cp calls, {dense} "
              f"{'present' if dense in irs['gt'] else 'absent'}")
    else:
        check("spatial bias", spatialFwd == 0 and spatialBwd == 0,
              "none in this model")
    sizes = (f"{m.group(1)}" + (f" to {m.group(2)}" if m.group(2) else "")
             if m else "?")
    want = (f"{tg.S // C}" if tg.S % C == 0
            else f"{tg.S // C} to {tg.S // C + 1}")
    check("cp blocks", m is not None and sizes == want and
          blockCut < 0.75 * randomCut,
          f"{sizes} nodes per rank, {blockCut:.1f}% of "
          f"the edges inside the sequences cut (random split: "
          f"{randomCut:.0f}%)")
    tdp.compare_runs(check, single, cp, P * C, STEPS)
    if "ag" in exes:
        # comm_bytes counts the all-to-alls: each rank sends per step what
        # the all-gather program sends, less its attention traffic (K, V
        # gathered twice, dK, dV reduce-scattered: C - 1 blocks each),
        # plus Ulysses's: per attention q, k, v to heads and the output
        # back, q, k, v, dO to heads and dq, dk, dv back (11 x (C - 1) / C
        # of the rank's [B, S/C, D]), the dense bias to heads twice and its
        # gradient back (3 x (C - 1) / C of [B, H, S/C, S]); or the int16
        # distance rows of the spatial bias, gathered once per step (the
        # step's four spatial calls each all-reduce one int to agree that
        # the rows are unchanged).
        log = os.path.join(args.work, "ag.jsonl")
        if os.path.exists(log):
            os.remove(log)
        subprocess.run(tdp.mpirun() + ["-np", str(P * C), exes["ag"], *run[:-3],
                                       "--steps", "2", "--quiet",
                                       "--log-json", log],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        ag = [json.loads(l) for l in open(log)][-1]["comm_bytes"]
        Bl, R, f = B // P, tg.S // C, 4
        act = Bl * R * tg.D * f * (C - 1) // C
        agAtt = 6 * (C - 1) * Bl * R * tg.D * f
        ulAtt = 11 * act
        if args.model == "mha":
            ulAtt += 3 * Bl * tg.H * R * tg.S * f * (C - 1) // C
        perStep = 0
        if args.model == "graphormer":
            perStep = (C - 1) * Bl * R * tg.S * 2 + 4 * int(2 * (C - 1) / C * 4)
        want = [a - 2 * agAtt + 2 * ulAtt + perStep for a in ag]
        got = cp[-1]["comm_bytes"]
        check("comm_bytes", got == want and all(
            r["comm_bytes"] == got for r in cp),
              f"{got[0]} bytes per rank per step with Ulysses, {ag[0]} "
              f"with the all-gather (2 attentions: {ulAtt} vs {agAtt} "
              f"bytes each; distance rows {perStep})")
    if args.zero:
        # ZeRO shards over all P * C ranks (the gradients are summed over
        # dp x cp): 1/(P*C) of the AdamW moments (plus the step counter and
        # the padding of the buckets), and with zero=3 of the parameters.
        n = P * C
        s1 = tdp.optimizer_state_bytes(irs["single.gt"])
        sn = tdp.optimizer_state_bytes(irs["cp.gt"])
        check("optimizer state", sn <= s1 / n + 4 * (2 * n + 1),
              f"{s1} bytes per rank alone, {sn} with {plan} "
              f"(ratio {s1 / max(sn, 1):.2f})")
        p1 = tdp.parameter_bytes(irs["single.gt"])
        pn = tdp.parameter_bytes(irs["cp.gt"])
        want = pn <= p1 / n + 4 * 2 * n if args.zero == 3 else pn == p1
        check("parameters", want and p1 > 0,
              f"{p1} bytes per rank alone, {pn} with {plan} "
              f"(ratio {p1 / max(pn, 1):.2f})")
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
