#!/usr/bin/env python3
"""Numerical check of gt ops whose CPU lowering no example exercises:
gt.cross_entropy (with and without a mask) and gt.edge_bias. Writes a .mlir
module using them on function arguments, compiles it with megagraph-compile
--emit=exe, runs it on random inputs and compares with NumPy.

usage: gt_ops_check.py MEGAGRAPH_COMPILE WORKDIR
Prints one line per output: NAME: max abs error E OK|FAIL; exits 1 on FAIL.
"""
import os
import subprocess
import sys

import numpy as np

B, S, C, L, E, H = 2, 5, 4, 3, 6, 2

MODULE = f"""
func.func @main(%logits: tensor<{B}x{S}x{C}xf32> {{gt.name = "logits"}},
                %labels: tensor<{B}x{S}xi64> {{gt.name = "labels"}},
                %mask: tensor<{B}x{S}xi1> {{gt.name = "mask"}},
                %path: tensor<{B}x{S}x{S}x{L}xi64> {{gt.name = "path"}},
                %dist: tensor<{B}x{S}x{S}xi64> {{gt.name = "dist"}},
                %table: tensor<{E}x{H}xf32> {{gt.name = "table"}},
                %w: tensor<{L}x{H}x{H}xf32> {{gt.name = "w"}})
    -> (tensor<f32> {{gt.name = "loss"}}, tensor<f32> {{gt.name = "loss_all"}},
        tensor<{B}x{H}x{S}x{S}xf32> {{gt.name = "edge_bias"}}) {{
  %0 = gt.cross_entropy %logits, %labels mask(%mask)
      : (tensor<{B}x{S}x{C}xf32>, tensor<{B}x{S}xi64>, tensor<{B}x{S}xi1>) -> tensor<f32>
  %1 = gt.cross_entropy %logits, %labels
      : (tensor<{B}x{S}x{C}xf32>, tensor<{B}x{S}xi64>) -> tensor<f32>
  %2 = gt.edge_bias %path, %dist, %table, %w
      : (tensor<{B}x{S}x{S}x{L}xi64>, tensor<{B}x{S}x{S}xi64>, tensor<{E}x{H}xf32>,
         tensor<{L}x{H}x{H}xf32>) -> tensor<{B}x{H}x{S}x{S}xf32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<{B}x{H}x{S}x{S}xf32>
}}
"""


def reference(inputs):
    x, y, m = inputs["logits"], inputs["labels"], inputs["mask"]
    mx = x.max(-1, keepdims=True)
    lse = np.log(np.exp(x - mx).sum(-1)) + mx[..., 0]
    picked = np.take_along_axis(x, y[..., None], -1)[..., 0]
    nll = (lse - picked).astype(np.float64)
    loss = (nll * m).sum() / max(m.sum(), 1)
    loss_all = nll.mean()
    path, dist, table, w = (inputs[k] for k in ("path", "dist", "table", "w"))
    out = np.zeros((B, H, S, S))
    for b in range(B):
        for i in range(S):
            for j in range(S):
                acc = np.zeros(H)
                for l in range(L):
                    t = path[b, i, j, l]
                    if t >= 0:
                        acc += table[t] @ w[l]
                out[b, :, i, j] = acc / min(max(dist[b, i, j], 1), L)
    return {"loss": np.float32(loss), "loss_all": np.float32(loss_all),
            "edge_bias": out.astype(np.float32)}


def main():
    compiler, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    inputs = {
        "logits": rng.standard_normal((B, S, C)).astype(np.float32),
        "labels": rng.integers(0, C, (B, S)).astype(np.int64),
        "mask": rng.random((B, S)) < 0.6,
        "path": rng.integers(-1, E, (B, S, S, L)).astype(np.int64),
        "dist": rng.integers(0, L + 2, (B, S, S)).astype(np.int64),
        "table": rng.standard_normal((E, H)).astype(np.float32),
        "w": rng.standard_normal((L, H, H)).astype(np.float32),
    }
    mlir = os.path.join(work, "gt_ops.mlir")
    with open(mlir, "w") as f:
        f.write(MODULE)
    exe = os.path.join(work, "gt_ops")
    subprocess.run([compiler, mlir, "--emit=exe", "-o", exe], check=True)
    cmd = [exe, "--mode", "infer", "--quiet", "--output-dir", os.path.join(work, "out")]
    for name, value in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    ok = True
    for name, want in reference(inputs).items():
        got = np.load(os.path.join(work, "out", name + ".npy"))
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        good = got.shape == np.shape(want) and err <= 1e-5
        ok &= good
        print(f"{name}: max abs error {err:.3g} {'OK' if good else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
