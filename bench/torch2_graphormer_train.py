"""The PyTorch 2.x side of bench/run_torch2_bench.sh: the training (or
inference) step of the bench Graphormer (BenchGraphormerTrain of
bench/graphormer_bench.py, rewritten here so that it runs under any PyTorch
2.x without the exporter's dependencies) from the same initial weights and
on the same batches as the compiled MegaGraph step.

  * weights: OUT/params/<state_dict name>.npy as graphormer_bench.py wrote
    them (the ONNX model's initializers);
  * batches: the MegaGraph run's --dump-inputs DIR, DIR/step<t>/<input>.npy
    (x, in_degree, out_degree, spd, labels, label_mask), used in order and
    cycled, so step t sees what MegaGraph's step t saw;
  * the loss the compiled step computes: cross entropy averaged over the
    training nodes (label_mask), the others ignored; no dropout (the ONNX
    export is of the eval graph);
  * AdamW, betas 0.9 / 0.999, eps 1e-8, no weight decay (what
    `megagraph-compile --train --optimizer adamw` builds).

Variants (--attention):
  manual   softmax(q @ k^T / sqrt(dh) + bias) @ v, as the model is written
  sdpa     F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
and --compile wraps the model in torch.compile (inductor; its compile time
is logged as compile_s of the first step).

Per step: load the batch (untimed), then time forward, loss, backward and
optimizer step (train) or one forward under torch.no_grad() (--infer).
--log-json appends one line per step:
  {"step":t,"loss":L,"step_time_s":T,"peak_rss_bytes":P}
(P = the process's peak RSS so far, getrusage; L = null with --infer). A
benchmark, never a test.

  /opt/torch-venv/bin/python bench/torch2_graphormer_train.py \
      --model-dir DIR --batches DUMP --steps 12 --attention sdpa \
      [--compile] [--infer [--save-logits FILE.npy]] [--threads 2]
      [--lr 1e-3] [--log-json FILE]
"""

import argparse
import json
import math
import os
import resource
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

INPUTS = ("x", "in_degree", "out_degree", "spd")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples", "models"))
from graphormer import MultiHeadSelfAttention  # noqa: E402


class Attention(MultiHeadSelfAttention):
    """The example's hand-written attention, or (sdpa) the same projections
    through F.scaled_dot_product_attention."""

    def __init__(self, d, h, sdpa):
        super().__init__(d, h)
        self.sdpa = sdpa

    def forward(self, x, bias):
        if not self.sdpa:
            return super().forward(x, bias)
        b, s, d = x.shape
        q, k, v = (p(x).view(b, s, self.h, self.dh).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, d))


class Layer(nn.Module):
    def __init__(self, d, h, ffn, sdpa):
        super().__init__()
        self.attn_norm = nn.LayerNorm(d)
        self.attn = Attention(d, h, sdpa)
        self.ffn_norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))

    def forward(self, x, bias):
        x = x + self.attn(self.attn_norm(x), bias)
        return x + self.ffn(self.ffn_norm(x))


class Graphormer(nn.Module):
    """BenchGraphormerTrain (same parameter names, same forward)."""

    def __init__(self, cfg, sdpa):
        super().__init__()
        d, h = cfg["dim"], cfg["heads"]
        self.feat_encoder = nn.Linear(cfg["features"], d)
        self.in_degree_encoder = nn.Embedding(cfg["max_degree"], d)
        self.out_degree_encoder = nn.Embedding(cfg["max_degree"], d)
        self.spatial_pos_encoder = nn.Embedding(cfg["num_spatial"], h)
        self.layers = nn.ModuleList(
            [Layer(d, h, cfg["ffn_dim"], sdpa) for _ in range(cfg["layers"])])
        self.final_norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, cfg["classes"])

    def forward(self, x, in_degree, out_degree, spd):
        h = self.feat_encoder(x)
        h = h + self.in_degree_encoder(in_degree) + self.out_degree_encoder(out_degree)
        bias = self.spatial_pos_encoder(spd).permute(0, 3, 1, 2)
        for layer in self.layers:
            h = layer(h, bias)
        return self.head(self.final_norm(h))


def load_model(model_dir, sdpa):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    model = Graphormer(cfg, sdpa)
    params = os.path.join(model_dir, "params")
    state = {n: torch.from_numpy(np.load(os.path.join(params, f"{n}.npy")))
             for n in model.state_dict()}
    model.load_state_dict(state)
    return model


def load_batches(root, steps):
    """DIR/step<t>/ for t = 1.. as long as they exist (at most `steps`)."""
    out = []
    while len(out) < steps:
        d = os.path.join(root, f"step{len(out) + 1}")
        if not os.path.isdir(d):
            break
        out.append({n: torch.from_numpy(np.load(os.path.join(d, f"{n}.npy")))
                    for n in INPUTS + ("labels", "label_mask")})
    if not out:
        sys.exit(f"error: no batches under {root}/step1/")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--batches", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--attention", choices=("manual", "sdpa"), default="manual")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--infer", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--log-json")
    ap.add_argument("--save-logits",
                    help="--infer: write the last forward's logits (.npy)")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = load_model(a.model_dir, a.attention == "sdpa")
    batches = load_batches(a.batches, a.steps)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.0)
    fn = torch.compile(model) if a.compile else model
    if a.infer:
        model.eval()
    log = open(a.log_json, "a") if a.log_json else None
    print(f"torch {torch.__version__}: {'infer' if a.infer else 'train'} "
          f"attention={a.attention} compile={a.compile} "
          f"threads={torch.get_num_threads()}", file=sys.stderr)

    times = []
    for step in range(a.steps):
        # inference: always the first batch (what MegaGraph's --input is)
        b = batches[0 if a.infer else step % len(batches)]
        args = [b[n] for n in INPUTS]
        start = time.perf_counter()
        if a.infer:
            with torch.no_grad():
                logits = fn(*args)
            loss = float("nan")
        else:
            logits = fn(*args)
            c = logits.shape[-1]
            target = b["labels"].reshape(-1).masked_fill(
                ~b["label_mask"].reshape(-1), -100)
            lossT = F.cross_entropy(logits.reshape(-1, c), target)
            opt.zero_grad(set_to_none=True)
            lossT.backward()
            opt.step()
            loss = lossT.item()
        secs = time.perf_counter() - start
        if a.infer and a.save_logits and step + 1 == a.steps:
            np.save(a.save_logits, logits.numpy())
        del logits
        times.append(secs)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        rec = dict(step=step + 1, loss=loss if math.isfinite(loss) else None,
                   step_time_s=secs, peak_rss_bytes=peak)
        if log:
            log.write(json.dumps(rec) + "\n")
            log.flush()
        print(f"step {step + 1}/{a.steps}  loss {loss:.5f}  {secs:.3f} s  "
              f"peak RSS {peak / 2**20:.0f} MiB", file=sys.stderr)
    med = sorted(times[1:] or times)[len(times[1:] or times) // 2]
    print(f"torch: ok, {a.steps} step(s), median step {med * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
