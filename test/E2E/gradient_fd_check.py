#!/usr/bin/env python3
"""Finite-difference check of the compiled gradients against the compiled
loss itself (no PyTorch reference): compiles MODEL with `megagraph-compile
--gradients --emit=exe`, runs it on fixed inputs, labels and masks, then,
for each direction d over the parameters (float ONNX initializers), writes
two perturbed copies of the ONNX model with the initializers theta +- eps*d
(float64 arithmetic, rounded once to float32), compiles and runs them with
the same flags and inputs, and compares

    fd   = L(theta+) - L(theta-)                (compiled float32 losses)
    pred = sum_p grad_p . (theta+_p - theta-_p)  (compiled gradients, float64)

i.e. the central difference against the gradient along the perturbation
actually applied after rounding to float32 (the same as g.d * 2 eps up to
that rounding). Each direction is d_p = rms(theta_p) * N(0, 1) for every
parameter p it covers, so eps is relative to each tensor's scale.

Directions: `all` (every parameter at once), and with --per-param one per
parameter tensor (two more compiles each).

Negative controls, from the same compiled outputs (no extra compiles):
  * wrong direction: pred along another random direction against fd;
  * sign flip: pred with one gradient negated, for the parameter with the
    largest share of pred (for a per-parameter direction: its parameter).
Each control must exceed the tolerance (`detected OK`), else the check
could not see that error (`NOT detected FAIL`).

usage: gradient_fd_check.py MEGAGRAPH_COMPILE WORKDIR MODEL [--per-param]
           [--eps E] [--jobs N] [--inject flip:PARAM|direction]
           [COMPILER FLAGS...]
--eps: the smallest relative step (default 1e-3); --jobs: parallel
compiles (default 2); --inject (to see the check fail): negate the compiled
gradient of PARAM, or perturb the models along another direction than the
one the prediction uses.
MODEL is a gradient_check.py model (ops, block, graphormer, ex:graphormer,
...). Prints `<direction>: eps S fd F pred P rel err E OK|FAIL` per
direction and its controls; exits 1 on FAIL.
"""
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gradient_check  # noqa: E402  (model building, export, feeds, runner)

TOL = 1e-2
# The step along each direction: eps = TARGET / (2 |g.d|) clipped to
# [EPS, 100 EPS], i.e. at least EPS relative to each tensor's scale and large
# enough that |L+ - L-| is about TARGET (~8000 float32 ulps of a loss near
# 2), so the loss's round-off stays ~1e-4 of the difference. Only the step
# size depends on the compiled gradient; both sides use the same points.
EPS = 1e-3
TARGET = 2e-3
# The direction seed. The `ops` model is only piecewise smooth (the
# threshold of where(h1 > 0.1, ...) is a jump, clamp has kinks): a segment
# that crosses a jump measures the jump, not the derivative. Seed 158 was
# picked by a float64 PyTorch scan of seeds 0..199 so that none of its
# directions (all, per parameter) crosses one within twice its step: with
# TARGET 1e-3, 2e-3 and 4e-3 the float64 central differences match the
# float64 derivative to 5e-4 or better (2 float32 ulps of the loss
# included). Re-check the seed if the `ops` model or its inputs change.
SEED = 158


def compile_and_run(compiler, onnx_path, flags, feeds, work):
    """Compiles ONNX_PATH into WORK/grad, runs it on FEEDS; returns the
    output folder. Initializers shared by several nodes stay one parameter
    (--keep-tied-initializers), as the differences perturb each shared
    initializer of the file as a whole."""
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(work, "grad")
    proc = subprocess.run([compiler, onnx_path, "--gradients", "--emit=exe",
                           "--keep-tied-initializers", "-o", exe] + flags,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise RuntimeError(f"megagraph-compile failed on {onnx_path}")
    out = os.path.join(work, "out")
    gradient_check.run_exe(exe, feeds, work, out)
    return out


def perturbed_model(model, values, direction, eps, sign, path):
    """Writes MODEL with the initializers of DIRECTION set to
    float32(theta + sign*eps*d); returns the float32 values written."""
    written = {}
    for init in model.graph.initializer:
        if init.name not in direction:
            continue
        theta = values[init.name].astype(np.float64)
        new = (theta + sign * eps * direction[init.name]).astype(np.float32)
        init.CopyFrom(numpy_helper.from_array(new, init.name))
        written[init.name] = new
    onnx.save(model, path)
    return written


def main():
    argv = sys.argv[1:]
    compiler, work, which = argv[0], argv[1], argv[2]
    rest = argv[3:]
    per_param = "--per-param" in rest
    rest = [a for a in rest if a != "--per-param"]
    eps_min, jobs, inject = EPS, 2, None
    while rest and rest[0] in ("--eps", "--jobs", "--inject"):
        if rest[0] == "--eps":
            eps_min = float(rest[1])
        elif rest[0] == "--jobs":
            jobs = int(rest[1])
        else:
            inject = rest[1]
        rest = rest[2:]

    _, inputs, classes, onnx_path, flags = gradient_check.prepare(
        which, work, rest)
    feeds = gradient_check.make_feeds(inputs, classes)

    base = compile_and_run(compiler, onnx_path, flags, feeds,
                           os.path.join(work, "base"))
    loss = float(np.load(os.path.join(base, "loss.npy")))
    model = onnx.load(onnx_path)
    values, grads = {}, {}
    for init in model.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        values[init.name] = numpy_helper.to_array(init)
        grads[init.name] = np.load(
            os.path.join(base, f"grad:{init.name}.npy")).astype(np.float64)
    names = list(values)
    if inject and inject.startswith("flip:"):
        grads[inject[5:]] = -grads[inject[5:]]
    print(f"loss {loss:.6f}, {len(names)} parameters")

    rng = np.random.default_rng(SEED)

    def random_direction(params):
        d = {}
        for n in params:
            v = values[n].astype(np.float64)
            scale = float(np.sqrt((v * v).mean())) or 1.0
            d[n] = scale * rng.standard_normal(v.shape)
        return d

    directions = [("all", random_direction(names))]
    if per_param:
        directions += [(n, random_direction([n])) for n in names]
    # Same count as `directions`, drawn after them: the wrong-direction
    # controls.
    wrong = [random_direction(list(d)) for _, d in directions]
    steps = []
    for _, direction in directions:
        gd = abs(sum(float((grads[n] * direction[n]).sum()) for n in direction))
        steps.append(min(max(eps_min, TARGET / (2 * gd) if gd else 0.0),
                         100 * eps_min))

    tasks = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for i, (label, direction) in enumerate(directions):
            eps = steps[i]
            if inject == "direction":
                direction = wrong[i]
            for sign, tag in ((1.0, "plus"), (-1.0, "minus")):
                folder = os.path.join(work, f"d{i}-{tag}")
                os.makedirs(folder, exist_ok=True)
                path = os.path.join(folder, "model.onnx")
                written = perturbed_model(onnx.load(onnx_path), values,
                                          direction, eps, sign, path)
                future = pool.submit(compile_and_run, compiler, path, flags,
                                     feeds, folder)
                tasks[(i, tag)] = (future, written)
        results = {key: (np.load(os.path.join(f.result(), "loss.npy")), w)
                   for key, (f, w) in tasks.items()}

    ok = True

    def rel_err(pred, fd):
        return abs(pred - fd) / max(abs(fd), 1e-30)

    for i, (label, direction) in enumerate(directions):
        l_plus, w_plus = results[(i, "plus")]
        l_minus, w_minus = results[(i, "minus")]
        fd = float(l_plus) - float(l_minus)
        eps = steps[i]
        delta = {n: w_plus[n].astype(np.float64) - w_minus[n].astype(np.float64)
                 for n in direction}
        if inject == "direction":  # the models moved along wrong[i]
            delta = {n: 2 * eps * direction[n] for n in direction}
        share = {n: float((grads[n] * delta[n]).sum()) for n in direction}
        pred = sum(share.values())
        rel = rel_err(pred, fd)
        good = np.isfinite(rel) and rel <= TOL
        ok &= good
        print(f"{label}: eps {eps:.2e} fd {fd:.6e} pred {pred:.6e} "
              f"rel err {rel:.2e} "
              f"{'OK' if good else 'FAIL'}")

        # Controls: each must be off by more than the tolerance.
        wrong_pred = sum(float((grads[n] * 2 * eps * wrong[i][n]).sum())
                         for n in direction)
        top = max(share, key=lambda n: abs(share[n]))
        flip_pred = pred - 2 * share[top]
        for what, value in (("wrong direction", wrong_pred),
                            (f"sign flip of grad:{top}", flip_pred)):
            err = rel_err(value, fd)
            seen = err > TOL
            ok &= seen
            print(f"  control {what}: rel err {err:.2e} "
                  f"{'detected OK' if seen else 'NOT detected FAIL'}")
        if label == "all":
            flips = sum(rel_err(pred - 2 * s, fd) > TOL for s in share.values())
            print(f"  (a sign flip alone would be detected for {flips} of "
                  f"{len(share)} parameters along this direction)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
