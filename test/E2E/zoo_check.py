#!/usr/bin/env python3
"""Checks MegaGraph against the model zoo (examples/zoo/): public Graph Transformer
codebases exported from PyTorch three ways (torch2 dynamo, torch2-legacy, torch113).

usage: zoo_check.py --compiler PATH/megagraph-compile [--zoo DIR] [--models a,b]
                    [--styles torch2,...] [--tol 1e-4] [--work-dir DIR] [--keep]
                    [--json FILE] [--markdown FILE] [--timeout SECONDS] [--no-exe]
                    [--runtime-dir DIR]

For every zoo entry and export style listed in DIR/manifest.json:
  1. `megagraph-compile model.onnx --emit=gt`: counts the raised ops in the output
     (gt.attention and how many carry a bias(...) / mask(...) operand, gt.spatial_bias,
     gt.node_embedding, gt.linear, gt.gelu, gt.layer_norm, ...) and checks them against
     the model's expectations in the manifest ("expect": what a correct raise must find;
     "desired" counts are reported but do not fail);
  2. `megagraph-compile model.onnx --emit=exe`, runs `EXE --mode infer --input
     NAME=inputs/NAME.npy ... --output-dir DIR` and compares every output with
     PyTorch's (outputs/NAME.npy): same shape, finite, |got - ref| <= tol + tol * |ref|.
Prints a table (one row per entry and style) and the first error of each failure, then
`N passed, M failed`; exits 1 if anything failed. Needs only numpy (Debian's python3).

Expectation format (manifest.json, models.<entry>.expect):
  "attention": {"count": 2, "bias": 2, "mask": 0, "masked": 2}
      count: exact number of gt.attention; bias / mask: at least that many carry a
      bias(...) / mask(...) operand; masked: at least that many carry either (a key
      padding or sparsity mask may be raised as a mask or folded into an additive bias)
  "ops": {"gt.layer_norm": 5, "gt.linear": ">=8", "gt.gelu": "<=3"}
      int = exact, ">=k" = at least, "<=k" = at most; "gt.a|gt.b" counts either op
  "desired": same form as "ops", reported only
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ZOO = os.path.normpath(os.path.join(HERE, "..", "..", "examples", "zoo"))

def count_ops(text):
    """gt op counts in printed MLIR plus, for gt.attention, bias / mask operand counts."""
    ops = {}
    att = {"count": 0, "bias": 0, "mask": 0, "masked": 0}
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        # an op is `%r = gt.x ...`, `%a, %b = gt.x ...` or `gt.x ...` (no result)
        m = re.match(r"^(?:%[^=]+=\s*)?\"?(gt\.[a-z_]+)\b", s)
        if not m:
            continue
        name = m.group(1)
        ops[name] = ops.get(name, 0) + 1
        if name == "gt.attention":
            has_bias = " bias(" in s
            has_mask = " mask(" in s
            att["count"] += 1
            att["bias"] += has_bias
            att["mask"] += has_mask
            att["masked"] += has_bias or has_mask
    return ops, att


def check_count(got, want):
    """want: int (exact), '>=k', '<=k', or a plain digit string."""
    if isinstance(want, int):
        return got == want
    w = str(want).strip()
    if w.startswith(">="):
        return got >= int(w[2:])
    if w.startswith("<="):
        return got <= int(w[2:])
    return got == int(w)


def compare_counts(ops, att, expect):
    """List of mismatch strings (empty: the raise is as expected) and of missing desired ops."""
    bad = []
    for key, want in (expect.get("attention") or {}).items():
        got = att.get(key, 0)
        ok = got == want if key == "count" else got >= int(want)
        if not ok:
            label = "gt.attention" if key == "count" else f"gt.attention with {key}"
            rel = "" if key == "count" else ">="
            bad.append(f"{label}: {got} (want {rel}{want})")
    for name, want in (expect.get("ops") or {}).items():
        got = sum(ops.get(n, 0) for n in name.split("|"))
        if not check_count(got, want):
            bad.append(f"{name}: {got} (want {want})")
    missing = []
    for name, want in (expect.get("desired") or {}).items():
        got = sum(ops.get(n, 0) for n in name.split("|"))
        if not check_count(got, want):
            missing.append(f"{name}: {got} (want {want})")
    return bad, missing


def first_error(text):
    """The first diagnostic line, without its `FILE:LINE:COL: ` location prefix."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    pick = next((line for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)),
                lines[0] if lines else "no output")
    pick = re.sub(r"^\S+?:\d+:\d+:\s*", "", pick)
    return pick[:300]


def supported_onnx_ops(compiler):
    """The importer's op list (`--list-onnx-ops`), or None if it cannot be listed."""
    try:
        p = subprocess.run([compiler, "--list-onnx-ops"], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    ops = {line.split()[0] for line in p.stdout.splitlines() if line.strip()}
    return ops or None


def run(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired:
        return 124, "", f"error: timed out after {timeout}s: {' '.join(cmd[:2])}", time.time() - t0
    except OSError as e:
        return 126, "", f"error: cannot run {cmd[0]}: {e}", time.time() - t0


def check_one(compiler, entry, model, style, sdir, work, tol, timeout, do_exe, supported=None,
              exe_args=()):
    res = {"entry": entry, "style": style, "raise": "-", "exe": "-", "err": None,
           "counts": {}, "attention": {}, "mismatch": [], "desired_missing": [],
           "first_error": None, "stage": None, "status": "FAIL", "unsupported_ops": []}
    info = model["styles"].get(style)
    if info is None or info.get("status") != "exported" or \
            not os.path.exists(os.path.join(sdir, "model.onnx")):
        res["stage"] = "export"
        res["first_error"] = "not exported: " + str((info or {}).get("error", "no export"))
        return res
    onnx_path = os.path.join(sdir, "model.onnx")
    os.makedirs(work, exist_ok=True)
    if supported is not None:
        res["unsupported_ops"] = sorted(op for op in (info.get("ops") or {})
                                        if "::" not in op and op not in supported)
    res["opset"] = info.get("opset")
    shape_args = []
    for name, path in sorted((os.path.splitext(os.path.basename(p))[0], p)
                             for p in glob.glob(os.path.join(sdir, "inputs", "*.npy"))):
        declared = next((v for v in info.get("inputs") or [] if v["name"] == name), None)
        if declared and any(isinstance(d, str) or d == 0 for d in declared["shape"]):
            shape = np.load(path, mmap_mode="r").shape
            shape_args += ["--input-shape", f"{name}=" + "x".join(str(d) for d in shape)]

    # 1. raise
    gt_path = os.path.join(work, "model.gt.mlir")
    rc, out, err, _ = run([compiler, onnx_path, "--emit=gt", "-o", gt_path,
                           "--mlir-elide-elementsattrs-if-larger=16"] + shape_args, timeout)
    if rc != 0:
        res["raise"] = "error"
        res["stage"] = "import/raise"
        res["first_error"] = first_error(err + out)
    else:
        with open(gt_path) as f:
            text = f.read()
        ops, att = count_ops(text)
        res["counts"], res["attention"] = ops, att
        bad, missing = compare_counts(ops, att, model.get("expect") or {})
        res["mismatch"], res["desired_missing"] = bad, missing
        res["raise"] = "ok" if not bad else "mismatch"
        if bad:
            res["stage"] = "raise-count"
            res["first_error"] = "raise mismatch: " + "; ".join(bad)

    # 2. executable + numerics
    if do_exe:
        exe = os.path.join(work, "model.exe")
        rc, out, err, _ = run([compiler, onnx_path, "--emit=exe", "-o", exe] + shape_args
                              + list(exe_args), timeout)
        if rc != 0:
            res["exe"] = "compile-error"
            if res["stage"] is None:
                res["stage"] = "compile"
                res["first_error"] = first_error(err + out)
            res.setdefault("exe_error", first_error(err + out))
        else:
            outdir = os.path.join(work, "out")
            shutil.rmtree(outdir, ignore_errors=True)
            os.makedirs(outdir)
            cmd = [exe, "--mode", "infer", "--output-dir", outdir]
            for path in sorted(glob.glob(os.path.join(sdir, "inputs", "*.npy"))):
                cmd += ["--input", f"{os.path.splitext(os.path.basename(path))[0]}={path}"]
            rc, out, err, _ = run(cmd, timeout)
            if rc != 0:
                res["exe"] = f"run-error({rc})"
                if res["stage"] is None:
                    res["stage"] = "run"
                    res["first_error"] = first_error(err + out)
            else:
                worst, problems = 0.0, []
                refs = sorted(glob.glob(os.path.join(sdir, "outputs", "*.npy")))
                if not refs:
                    problems.append("no reference outputs")
                for ref_path in refs:
                    name = os.path.basename(ref_path)
                    got_path = os.path.join(outdir, name)
                    if not os.path.exists(got_path):
                        problems.append(f"{name[:-4]}: missing output")
                        continue
                    ref = np.load(ref_path).astype(np.float64)
                    got = np.load(got_path).astype(np.float64)
                    if ref.shape != got.shape:
                        problems.append(f"{name[:-4]}: shape {got.shape} != {ref.shape}")
                        continue
                    if not np.all(np.isfinite(got)):
                        problems.append(f"{name[:-4]}: non-finite values")
                        continue
                    e = float(np.max(np.abs(got - ref))) if ref.size else 0.0
                    worst = max(worst, e)
                    if not np.all(np.abs(got - ref) <= tol + tol * np.abs(ref)):
                        problems.append(f"{name[:-4]}: max abs err {e:.3g} > tol {tol:g}")
                res["err"] = worst
                res["exe"] = "ok" if not problems else "mismatch"
                if problems and res["stage"] is None:
                    res["stage"] = "numerics"
                    res["first_error"] = "; ".join(problems)
    if res["stage"] is None:
        res["status"] = "PASS"
    return res


def fmt_att(att):
    if not att:
        return "-"
    return f"{att.get('count', 0)} (b{att.get('bias', 0)} m{att.get('mask', 0)})"


def _md(text):
    return str(text).replace("|", "\\|")


def write_markdown(path, results):
    """One row per entry and style: raise result, gt.attention (bias / mask operands),
    executable, max abs error, status and the first error (or raise mismatch)."""
    lines = ["| model | style | opset | raise | gt.attention (bias, mask) | exe | max abs err | "
             "status | first error / mismatch |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        att = r["attention"]
        att_s = (f"{att.get('count', 0)} ({att.get('bias', 0)}, {att.get('mask', 0)})"
                 if att else "-")
        err = "-" if r["err"] is None else f"{r['err']:.2g}"
        first = r["first_error"] or ""
        if r.get("exe_error") and r["stage"] == "raise-count":
            first += f"; exe: {r['exe_error']}"
        lines.append(f"| {r['entry']} | {r['style']} | {r.get('opset', '-')} | {r['raise']} | "
                     f"{att_s} | {r['exe']} | {err} | {r['status']} | {_md(first)} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compiler", required=True, help="path to megagraph-compile")
    ap.add_argument("--zoo", default=DEFAULT_ZOO)
    ap.add_argument("--models", default="", help="comma-separated zoo entries (default: all)")
    ap.add_argument("--styles", default="", help="comma-separated styles (default: all)")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per command")
    ap.add_argument("--work-dir", default="")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json", default="", help="write the per-entry results here")
    ap.add_argument("--no-exe", action="store_true", help="only check the raise")
    ap.add_argument("--runtime-dir", default="",
                    help="passed to megagraph-compile --emit=exe (e.g. for a copied compiler)")
    ap.add_argument("--markdown", default="", help="also write the table as Markdown here")
    args = ap.parse_args()

    if not os.path.exists(args.compiler):
        print(f"error: compiler not found: {args.compiler}")
        return 2
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    entries = [m for m in args.models.split(",") if m] or sorted(manifest["models"])
    styles = [s for s in args.styles.split(",") if s] or manifest["styles"]
    unknown = [e for e in entries if e not in manifest["models"]]
    if unknown:
        print(f"error: not in the zoo manifest: {', '.join(unknown)}")
        return 2
    work_root = args.work_dir or tempfile.mkdtemp(prefix="zoo-check-")
    supported = supported_onnx_ops(os.path.abspath(args.compiler))
    results = []
    for entry in entries:
        model = manifest["models"][entry]
        for style in styles:
            sdir = os.path.join(args.zoo, entry, style)
            work = os.path.join(work_root, entry, style)
            r = check_one(os.path.abspath(args.compiler), entry, model, style, sdir, work,
                          args.tol, args.timeout, not args.no_exe, supported,
                          ["--runtime-dir", args.runtime_dir] if args.runtime_dir else [])
            results.append(r)
            detail = r["first_error"] or ""
            if not detail and r["err"] is not None:
                detail = f"max abs err {r['err']:.3g}"
            print(f"{r['status']}: {entry} [{style}] {detail}", flush=True)

    # table
    hdr = ("entry", "style", "raise", "gt.attention", "exe", "max err", "status")
    rows = [(r["entry"], r["style"], r["raise"], fmt_att(r["attention"]), r["exe"],
             "-" if r["err"] is None else f"{r['err']:.2g}", r["status"]) for r in results]
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    line = "  ".join(h.ljust(w) for h, w in zip(hdr, widths))
    print()
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    failures = [r for r in results if r["status"] != "PASS"]
    if failures:
        print("\nfirst error per failure:")
        for r in failures:
            print(f"  {r['entry']} [{r['style']}] ({r['stage']}): {r['first_error']}")
    unsup = [r for r in results if r["unsupported_ops"]]
    if unsup:
        print("\nONNX ops in the export that --list-onnx-ops does not list:")
        for r in unsup:
            print(f"  {r['entry']} [{r['style']}] (opset {r.get('opset')}): "
                  f"{', '.join(r['unsupported_ops'])}")
    missing = [r for r in results if r["desired_missing"]]
    if missing:
        print("\ndesired ops not raised (not a failure):")
        for r in missing:
            print(f"  {r['entry']} [{r['style']}]: {'; '.join(r['desired_missing'])}")
    passed = len(results) - len(failures)
    print(f"\n{passed} passed, {len(failures)} failed")
    if args.markdown:
        write_markdown(args.markdown, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    if not args.keep and not args.work_dir:
        shutil.rmtree(work_root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
