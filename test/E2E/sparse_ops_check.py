#!/usr/bin/env python3
"""Numerical check of gt.spmm and gt.sparse_attention compiled to a CPU
executable (the model is Inputs/sparse_ops.mlir): writes random inputs on
fixed CSR graphs (empty rows, duplicate edges, N != M), runs the executable
and compares every output with NumPy.

usage: sparse_ops_check.py EXE WORKDIR [--tol 1e-5]
Prints one line per output: NAME: max abs error E (tolerance T) OK|FAIL;
exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

N, D = 10, 16                     # nodes of the square graph, hidden size
DEG = [3, 1, 4, 0, 5, 2, 3, 0, 6, 2]  # rows 3 and 7 are empty; E = 26
N2, D2 = 4, 8                     # query nodes / key size of the 4 x 10 graph
DEG2 = [2, 0, 5, 3]               # E2 = 10


def csr(degrees, cols, rng):
    row_ptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    col_idx = rng.integers(0, cols, size=int(row_ptr[-1])).astype(np.int64)
    # Duplicate edges: the first two edges of every row of degree >= 2 meet.
    for i, d in enumerate(degrees):
        if d >= 2:
            col_idx[row_ptr[i] + 1] = col_idx[row_ptr[i]]
    return row_ptr, col_idx


def spmm(row_ptr, col_idx, w, x):
    out = np.zeros((len(row_ptr) - 1, x.shape[1]))
    for i in range(len(row_ptr) - 1):
        for e in range(row_ptr[i], row_ptr[i + 1]):
            out[i] += w[e] * x[col_idx[e]]
    return out


def sparse_attention(q, k, v, row_ptr, col_idx, heads, scale, bias=None):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    dh, dvh = q.shape[1] // heads, v.shape[1] // heads
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(q.shape[0]):
        edges = range(row_ptr[i], row_ptr[i + 1])
        if not edges:
            continue
        cols = col_idx[row_ptr[i]:row_ptr[i + 1]]
        for h in range(heads):
            qs, ks = slice(h * dh, (h + 1) * dh), slice(h * dvh, (h + 1) * dvh)
            s = scale * (k[cols, qs] @ q[i, qs])
            if bias is not None:
                s = s + bias[list(edges), h]
            p = np.exp(s - s.max())
            out[i, ks] = (p / p.sum()) @ v[cols, ks]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("workdir")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    row_ptr, col_idx = csr(DEG, N, rng)
    row_ptr2, col_idx2 = csr(DEG2, N, rng)
    f32 = np.float32
    inputs = {
        "x": rng.uniform(-1, 1, (N, D)).astype(f32),
        "w": rng.uniform(-1, 1, len(col_idx)).astype(f32),
        "row_ptr": row_ptr,
        "col_idx": col_idx,
        "row_ptr32": row_ptr.astype(np.int32),
        "col_idx32": col_idx.astype(np.int32),
        "eb": rng.uniform(-2, 2, (len(col_idx), 4)).astype(f32),
        "q2": rng.uniform(-2, 2, (N2, D2)).astype(f32),
        "k2": rng.uniform(-2, 2, (N, D2)).astype(f32),
        "row_ptr2": row_ptr2.astype(np.int32),
        "col_idx2": col_idx2.astype(np.int32),
    }
    agg = spmm(row_ptr, col_idx, inputs["w"].astype(np.float64),
               inputs["x"].astype(np.float64))
    refs = {
        "agg": agg,
        # The executable feeds its own f32 agg to the attention; so does this.
        "att": sparse_attention(inputs["x"], inputs["x"], agg.astype(f32),
                                row_ptr, col_idx, 4, 1 / np.sqrt(D / 4),
                                inputs["eb"].astype(np.float64)),
        "att2": sparse_attention(inputs["q2"], inputs["k2"], inputs["x"],
                                 row_ptr2, col_idx2, 2, np.float64(f32(0.3))),
    }

    in_dir = os.path.join(args.workdir, "inputs")
    out_dir = os.path.join(args.workdir, "outputs")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    cmd = [args.exe, "--mode", "infer", "--output-dir", out_dir]
    for name, value in inputs.items():
        path = os.path.join(in_dir, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"executable failed ({run.returncode}):\n{run.stdout}{run.stderr}")
        return 1

    ok = True
    for name, ref in refs.items():
        path = os.path.join(out_dir, name + ".npy")
        if not os.path.exists(path):
            print(f"{name}: missing output FAIL")
            ok = False
            continue
        got = np.load(path)
        if got.shape != ref.shape:
            print(f"{name}: shape {got.shape} != reference {ref.shape} FAIL")
            ok = False
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - ref)))
        status = "OK" if err <= args.tol and np.all(np.isfinite(got)) else "FAIL"
        ok &= status == "OK"
        print(f"{name}: max abs error {err:.3g} (tolerance {args.tol:g}) {status}")
    # The empty rows of both graphs must be exactly zero.
    for name, degrees in (("att", DEG), ("att2", DEG2), ("agg", DEG)):
        got = np.load(os.path.join(out_dir, name + ".npy"))
        for i, d in enumerate(degrees):
            if d == 0 and np.any(got[i] != 0):
                print(f"{name}: empty row {i} is not zero FAIL")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
