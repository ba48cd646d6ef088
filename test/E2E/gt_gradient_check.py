#!/usr/bin/env python3
"""Gradient check of the gt ops no exported model reaches yet: gt.spmm
(CSR with empty rows and duplicate edges), gt.edge_bias (paths with
missing edges, distances beyond the hop count), gt.sparse_attention (with
an edge bias; N != M, empty rows, a duplicate edge) and the
tanh-approximation gt.gelu. Writes a .mlir module whose float arguments are marked
`gt.differentiable`, compiles it with `megagraph-compile --gradients
--emit=exe`, runs it on random inputs, labels and a label mask, and compares
the masked cross-entropy loss and the gradient of every differentiable
argument (`d<name>`) with PyTorch autograd in float64.

    logits = gelu_tanh(spmm(row_ptr, col_idx, values, x)
                       + reshape(edge_bias(path, dist, table, hop_weights))
                       + sparse_attention(q, k, v, row_ptr, col_idx2,
                                          edge_bias))

usage: gt_gradient_check.py MEGAGRAPH_COMPILE WORKDIR
Prints `loss: rel err E OK|FAIL` and one line per argument; exits 1 on FAIL.
"""
import os
import subprocess
import sys

import numpy as np
import torch

from gradient_common import run_exe

TOL = 1e-4
FLOOR = 1e-3  # as in gradient_check.py

N, D = 8, 4                        # spmm: nodes (= rows = columns), features
DEG = [3, 0, 2, 4, 1, 0, 3, 2]     # rows 1 and 5 are empty; E = 15
S, L, T, H = 4, 3, 5, 2            # edge bias: nodes, hops, edge types, heads
M = 6                              # sparse attention: key nodes (same rows)
EDGES = sum(DEG)


def module():
    f = "{gt.differentiable, gt.name = \"%s\"}"
    return f"""
func.func @main(%rp: tensor<{N + 1}xi64> {{gt.name = "row_ptr"}},
                %ci: tensor<{EDGES}xi64> {{gt.name = "col_idx"}},
                %values: tensor<{EDGES}xf32> {f % "values"},
                %x: tensor<{N}x{D}xf32> {f % "x"},
                %path: tensor<{S}x{S}x{L}xi64> {{gt.name = "path"}},
                %dist: tensor<{S}x{S}xi64> {{gt.name = "dist"}},
                %table: tensor<{T}x{H}xf32> {f % "table"},
                %w: tensor<{L}x{H}x{H}xf32> {f % "hop_weights"},
                %ci2: tensor<{EDGES}xi64> {{gt.name = "col_idx2"}},
                %q: tensor<{N}x{D}xf32> {f % "q"},
                %k: tensor<{M}x{D}xf32> {f % "k"},
                %v: tensor<{M}x{D}xf32> {f % "v"},
                %eb: tensor<{EDGES}x{H}xf32> {f % "edge_bias"})
    -> (tensor<{N}x{D}xf32> {{gt.name = "logits"}}) {{
  %m = gt.spmm %rp, %ci, %values, %x
      : (tensor<{N + 1}xi64>, tensor<{EDGES}xi64>, tensor<{EDGES}xf32>,
         tensor<{N}x{D}xf32>) -> tensor<{N}x{D}xf32>
  %b = gt.edge_bias %path, %dist, %table, %w
      : (tensor<{S}x{S}x{L}xi64>, tensor<{S}x{S}xi64>, tensor<{T}x{H}xf32>,
         tensor<{L}x{H}x{H}xf32>) -> tensor<{H}x{S}x{S}xf32>
  %shape = tosa.const_shape {{values = dense<[{N}, {D}]> : tensor<2xindex>}}
      : () -> !tosa.shape<2>
  %br = tosa.reshape %b, %shape : (tensor<{H}x{S}x{S}xf32>, !tosa.shape<2>)
      -> tensor<{N}x{D}xf32>
  %s = tosa.add %m, %br : (tensor<{N}x{D}xf32>, tensor<{N}x{D}xf32>)
      -> tensor<{N}x{D}xf32>
  %a = gt.sparse_attention %q, %k, %v, %rp, %ci2 edge_bias(%eb) heads = {H}
      : (tensor<{N}x{D}xf32>, tensor<{M}x{D}xf32>, tensor<{M}x{D}xf32>,
         tensor<{N + 1}xi64>, tensor<{EDGES}xi64>, tensor<{EDGES}x{H}xf32>)
      -> tensor<{N}x{D}xf32>
  %sa = tosa.add %s, %a : (tensor<{N}x{D}xf32>, tensor<{N}x{D}xf32>)
      -> tensor<{N}x{D}xf32>
  %y = gt.gelu %sa {{tanh}} : tensor<{N}x{D}xf32>
  return %y : tensor<{N}x{D}xf32>
}}
"""


def reference(inputs):
    """logits of the module in float64 torch, with leaves for the
    differentiable arguments."""
    t = {k: torch.from_numpy(v) for k, v in inputs.items()}
    leaves = {k: t[k].double().requires_grad_()
              for k in ("values", "x", "table", "hop_weights", "q", "k", "v",
                        "edge_bias")}
    rows = torch.repeat_interleave(torch.arange(N), torch.tensor(DEG))
    msg = leaves["values"][:, None] * leaves["x"][t["col_idx"]]
    m = torch.zeros(N, D, dtype=torch.float64).index_add(0, rows, msg)
    path = t["path"]
    valid = (path >= 0).double()[..., None]
    emb = leaves["table"][path.clamp(0, T - 1)] * valid      # [S, S, L, H]
    b = torch.einsum("ijlg,lgh->hij", emb, leaves["hop_weights"])
    b = b / t["dist"].clamp(1, L).double()[None]
    s = m + b.reshape(N, D)
    # Sparse attention over the edges (rows, col_idx2), heads in D.
    dh = D // H
    col2 = t["col_idx2"]
    qh = leaves["q"].reshape(N, H, dh)[rows]
    kh = leaves["k"].reshape(M, H, dh)[col2]
    vh = leaves["v"].reshape(M, H, dh)[col2]
    score = (qh * kh).sum(-1) / np.sqrt(dh) + leaves["edge_bias"]  # [E, H]
    att = torch.zeros(N, H, dh, dtype=torch.float64)
    for i in range(N):
        sel = rows == i
        if sel.any():
            p = torch.softmax(score[sel], dim=0)              # [deg, H]
            att[i] = (p[..., None] * vh[sel]).sum(0)
    s = s + att.reshape(N, D)
    return torch.nn.functional.gelu(s, approximate="tanh"), leaves


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "model.mlir")
    with open(src, "w") as f:
        f.write(module())
    exe = os.path.join(work, "grad")
    # The LLVM translation warns about the `gt.differentiable` argument
    # attributes; the compiler's output is shown only when it fails.
    done = subprocess.run([compiler, src, "--gradients", "--emit=exe", "-o",
                           exe], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return 1

    rng = np.random.default_rng(5)
    row_ptr = np.concatenate([[0], np.cumsum(DEG)]).astype(np.int64)
    col_idx = rng.integers(0, N, EDGES).astype(np.int64)
    col_idx[1] = col_idx[0]  # a duplicate edge in row 0
    path = rng.integers(-1, T, (S, S, L)).astype(np.int64)
    dist = rng.integers(0, L + 2, (S, S)).astype(np.int64)
    inputs = {
        "row_ptr": row_ptr, "col_idx": col_idx,
        "values": rng.standard_normal(EDGES).astype(np.float32),
        "x": rng.standard_normal((N, D)).astype(np.float32),
        "path": path, "dist": dist,
        "table": rng.standard_normal((T, H)).astype(np.float32),
        "hop_weights": rng.standard_normal((L, H, H)).astype(np.float32),
        "col_idx2": rng.integers(0, M, EDGES).astype(np.int64),
        "q": rng.standard_normal((N, D)).astype(np.float32),
        "k": rng.standard_normal((M, D)).astype(np.float32),
        "v": rng.standard_normal((M, D)).astype(np.float32),
        "edge_bias": rng.standard_normal((EDGES, H)).astype(np.float32),
    }
    inputs["col_idx2"][3] = inputs["col_idx2"][2]  # a duplicate edge
    labels = rng.integers(0, D, N).astype(np.int64)
    mask = rng.random(N) < 0.7
    mask[0] = True
    feeds = dict(inputs, labels=labels, label_mask=mask,
                 eval_mask=(~mask).astype(np.float32))
    out = os.path.join(work, "out")
    run_exe(exe, feeds, work, out)

    logits, leaves = reference(inputs)
    ce = torch.nn.functional.cross_entropy(
        logits, torch.from_numpy(labels), reduction="none")
    w = torch.from_numpy(mask.astype(np.float64))
    loss = (ce * w).sum() / w.sum().clamp(min=1)
    loss.backward()

    ok = True

    def report(name, got, want):
        nonlocal ok
        rel = float(np.abs(got - want).max() / max(np.abs(want).max(), FLOOR))
        good = got.shape == want.shape and rel <= TOL
        ok &= good
        print(f"{name}: rel err {rel:.2e} {'OK' if good else 'FAIL'}")

    report("loss", np.load(os.path.join(out, "loss.npy")),
           loss.detach().numpy())
    for name, leaf in leaves.items():
        report(name, np.load(os.path.join(out, f"d{name}.npy")),
               leaf.grad.numpy())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
