#!/usr/bin/env python3
"""Export every zoo model three ways and write examples/zoo/manifest.json.

Usage (from anywhere):
    /usr/bin/python3 examples/zoo/export_zoo.py              # all styles, all models
    /usr/bin/python3 examples/zoo/export_zoo.py --styles torch113 --models graphormer

Styles (each written to examples/zoo/<entry>/<style>/):
  torch2         torch 2.x (PyPI, /opt/torch-venv) with the default
                 torch.onnx.export(model, args, path) arguments (dynamo exporter;
                 weights may go to model.onnx.data); afterwards only the per-node
                 stack-trace metadata (absolute paths) is removed
  torch2-legacy  torch 2.x, torch.onnx.export(..., dynamo=False, opset_version=17)
  torch113       Debian's torch 1.13 (/usr/bin/python3), opset_version=17

Each style directory holds model.onnx (+ model.onnx.data), inputs/<graph input>.npy,
outputs/<graph output>.npy (PyTorch's outputs, model.eval(), no_grad) and export.json.
The driver runs one worker per style under the right interpreter, then an onnxruntime
check of every export (in the torch 2 venv, which has onnxruntime) and merges the
results and each model's expectations (what a correct gt-raise must find) into
examples/zoo/manifest.json, which test/E2E/zoo_check.py reads.

Weights are drawn from numpy (zoo_common.init_weights), so they are bit-identical in
torch 1.13 and torch 2.x; export.json records a digest of the state_dict per style.
Inputs are numpy-generated too and therefore identical across styles.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MODEL_MODULES = [
    "graphormer_ms",
    "torchgt_graphormer",
    "torchgt_node",
    "nagphormer",
    "sgformer",
    "graphgps_dense",
    "gt_lappe",
    "exphormer_dense",
    "torch_transformer",
]

VENV_PY = "/opt/torch-venv/bin/python"
DEBIAN_PY = "/usr/bin/python3"
STYLES = {
    "torch113": DEBIAN_PY,
    "torch2-legacy": VENV_PY,
    "torch2": VENV_PY,
}


def load_modules(names=None):
    mods = []
    for m in MODEL_MODULES:
        if not os.path.exists(os.path.join(HERE, m + ".py")):
            print(f"warning: {m}.py missing, skipped")
            continue
        mod = importlib.import_module(m)
        if names:
            entries = [e for e in mod.VARIANTS if e in names or m in names]
            if not entries:
                continue
        mods.append(mod)
    return mods


def entries_of(mod, names=None):
    return [(e, kw) for e, kw in mod.VARIANTS.items()
            if not names or e in names or mod.__name__ in names]


# ---------------------------------------------------------------------------
# worker: one style, in the interpreter of that style
# ---------------------------------------------------------------------------

def _onnx_summary(path):
    import onnx
    proto = onnx.load(path, load_external_data=False)
    ops = {}
    for node in proto.graph.node:
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        ops[key] = ops.get(key, 0) + 1
    opset = max([o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")] or [0])

    def vi(v):
        tt = v.type.tensor_type
        return {"name": v.name, "dtype": onnx.TensorProto.DataType.Name(tt.elem_type),
                "shape": [d.dim_param if d.dim_param else d.dim_value for d in tt.shape.dim]}

    functions = len(getattr(proto, "functions", []))
    return {"opset": opset, "ops": dict(sorted(ops.items())), "num_nodes": len(proto.graph.node),
            "num_functions": functions, "ir_version": proto.ir_version,
            "inputs": [vi(v) for v in proto.graph.input
                       if v.name not in {i.name for i in proto.graph.initializer}],
            "outputs": [vi(v) for v in proto.graph.output]}


def _strip_stack_traces(path):
    """The one change made to a default torch 2 export: drop the per-node
    `pkg.torch.onnx.stack_trace` metadata. It holds absolute source paths (so a
    re-export elsewhere would differ) and is about a third of the file; the other
    metadata (namespace, class_hierarchy, fx_node, name_scopes) is kept."""
    import onnx
    proto = onnx.load(path, load_external_data=False)
    changed = False
    for node in proto.graph.node:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        if len(keep) != len(node.metadata_props):
            changed = True
            del node.metadata_props[:]
            node.metadata_props.extend(keep)
    if changed:
        onnx.save(proto, path)


def export_one(mod, entry, kw, style, out_dir):
    import numpy as np
    import torch
    import zoo_common as zc

    zc.seed_everything(0)
    model = mod.build()
    model.eval()
    named = mod.make_inputs(**kw)
    names = [n for n, _ in named]
    args = tuple(zc.t(a) for _, a in named)
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "outputs"), exist_ok=True)
    for stale in ("model.onnx", "model.onnx.data"):
        if os.path.exists(os.path.join(out_dir, stale)):
            os.remove(os.path.join(out_dir, stale))
    onnx_path = os.path.join(out_dir, "model.onnx")
    with torch.no_grad():
        ref = model(*args)
        ref = (ref,) if isinstance(ref, torch.Tensor) else tuple(ref)
        for r in ref:
            assert torch.isfinite(r).all(), f"{entry}: non-finite PyTorch output"
    # export outside no_grad, as users call it: with grad enabled and parameters that
    # require grad, nn.MultiheadAttention / nn.TransformerEncoderLayer do not take their
    # eval-mode fast path (torch._native_multi_head_attention /
    # torch._transformer_encoder_layer_fwd), which the TorchScript exporter cannot export
    if style == "torch2":
        # the default arguments, as a user would call it
        torch.onnx.export(model, args, onnx_path)
        _strip_stack_traces(onnx_path)
    elif style == "torch2-legacy":
        torch.onnx.export(model, args, onnx_path, dynamo=False, opset_version=17,
                          input_names=names, output_names=list(mod.OUTPUT_NAMES))
    else:
        torch.onnx.export(model, args, onnx_path, opset_version=17,
                          input_names=names, output_names=list(mod.OUTPUT_NAMES))
    with torch.no_grad():
        ref2 = model(*args)
        ref2 = (ref2,) if isinstance(ref2, torch.Tensor) else tuple(ref2)
        for a, b in zip(ref, ref2):
            assert torch.equal(a, b), f"{entry}: model not deterministic in eval mode"

    summary = _onnx_summary(onnx_path)
    # graph input/output names as the exporter wrote them (the dynamo exporter keeps
    # the forward() argument names; outputs may get generated names)
    onnx_inputs = [v["name"] for v in summary["inputs"]]
    onnx_outputs = [v["name"] for v in summary["outputs"]]
    by_name = dict(named)
    missing = [n for n in onnx_inputs if n not in by_name]
    if missing:
        raise RuntimeError(f"ONNX inputs {missing} are not forward() arguments {names}")
    for old in os.listdir(os.path.join(out_dir, "inputs")):
        os.remove(os.path.join(out_dir, "inputs", old))
    for old in os.listdir(os.path.join(out_dir, "outputs")):
        os.remove(os.path.join(out_dir, "outputs", old))
    for n in onnx_inputs:
        np.save(os.path.join(out_dir, "inputs", f"{n}.npy"), by_name[n])
    if len(onnx_outputs) != len(ref):
        raise RuntimeError(f"{len(onnx_outputs)} ONNX outputs for {len(ref)} PyTorch outputs")
    for n, r in zip(onnx_outputs, ref):
        np.save(os.path.join(out_dir, "outputs", f"{n}.npy"), r.detach().cpu().numpy())
    # bytes of what the export consists of: model, external data, inputs, outputs
    paths = [onnx_path, onnx_path + ".data"]
    for sub in ("inputs", "outputs"):
        paths += [os.path.join(out_dir, sub, f) for f in os.listdir(os.path.join(out_dir, sub))]
    size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    dropped = [n for n in names if n not in onnx_inputs]
    info = dict(summary, style=style, torch=torch.__version__, state_digest=zc.state_digest(model),
                external_data=os.path.exists(onnx_path + ".data"), bytes=size,
                dropped_inputs=dropped, status="exported")
    return info


def worker(style, names):
    import torch
    ok = True
    for mod in load_modules(names):
        for entry, kw in entries_of(mod, names):
            out_dir = os.path.join(HERE, entry, style)
            os.makedirs(out_dir, exist_ok=True)
            rec_path = os.path.join(out_dir, "export.json")
            log_path = os.path.join(out_dir, "export.log")
            if os.path.exists(log_path):
                os.remove(log_path)
            try:
                info = export_one(mod, entry, kw, style, out_dir)
                print(f"[{style}] {entry}: opset {info['opset']}, {info['num_nodes']} nodes, "
                      f"{info['bytes']} bytes" + (" (+external data)" if info["external_data"] else ""),
                      flush=True)
            except Exception as e:  # record the failure; the checker reports it
                ok = False
                msg = f"{type(e).__name__}: {e}".strip().splitlines()
                first = next((line for line in msg if line.strip()), "error")
                info = dict(style=style, torch=torch.__version__, status="export-failed",
                            error=first[:400])
                with open(log_path, "w") as f:
                    traceback.print_exc(file=f)
                print(f"[{style}] {entry}: EXPORT FAILED: {first[:300]}", flush=True)
            with open(rec_path, "w") as f:
                json.dump(info, f, indent=1, sort_keys=True)
                f.write("\n")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# onnxruntime check (venv)
# ---------------------------------------------------------------------------

def ort_check(names):
    import numpy as np
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    for mod in load_modules(names):
        for entry, _ in entries_of(mod, names):
            refs = {}
            for style in STYLES:
                d = os.path.join(HERE, entry, style)
                rec_path = os.path.join(d, "export.json")
                if not os.path.exists(rec_path):
                    continue
                with open(rec_path) as f:
                    rec = json.load(f)
                if rec.get("status") != "exported":
                    continue
                try:
                    so = ort.SessionOptions()
                    so.intra_op_num_threads = 1
                    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                                providers=["CPUExecutionProvider"])
                    feeds = {i.name: np.load(os.path.join(d, "inputs", f"{i.name}.npy"))
                             for i in sess.get_inputs()}
                    outs = sess.run(None, feeds)
                    err = 0.0
                    for o, got in zip(sess.get_outputs(), outs):
                        want = np.load(os.path.join(d, "outputs", f"{o.name}.npy"))
                        if got.shape != want.shape:
                            raise RuntimeError(f"{o.name}: shape {got.shape} != {want.shape}")
                        err = max(err, float(np.max(np.abs(got.astype(np.float64) - want))))
                        refs[style] = want
                    rec["ort_max_abs_err"] = err
                    rec["ort"] = "ok" if err <= 1e-4 else "mismatch"
                except Exception as e:
                    rec["ort"] = "failed"
                    rec["ort_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:400]
                with open(rec_path, "w") as f:
                    json.dump(rec, f, indent=1, sort_keys=True)
                    f.write("\n")
                print(f"[ort] {entry}/{style}: {rec['ort']} "
                      f"{rec.get('ort_max_abs_err', rec.get('ort_error', ''))}", flush=True)
            # PyTorch 1.13 vs 2.x reference outputs on identical weights and inputs
            for style in ("torch2-legacy", "torch2"):
                if "torch113" in refs and style in refs:
                    diff = float(np.max(np.abs(refs["torch113"].astype(np.float64) - refs[style])))
                    rec_path = os.path.join(HERE, entry, style, "export.json")
                    with open(rec_path) as f:
                        rec = json.load(f)
                    rec["ref_diff_vs_torch113"] = diff
                    with open(rec_path, "w") as f:
                        json.dump(rec, f, indent=1, sort_keys=True)
                        f.write("\n")
                    print(f"[ref] {entry}: PyTorch output, torch 1.13 vs {style} "
                          f"({rec['torch']}): max abs diff {diff:.3g}")
    return 0


# ---------------------------------------------------------------------------
# manifest
# ---------------------------------------------------------------------------

def write_manifest():
    manifest = {"styles": list(STYLES), "models": {}}
    for mod in load_modules():
        for entry, kw in entries_of(mod):
            styles = {}
            for style in STYLES:
                rec_path = os.path.join(HERE, entry, style, "export.json")
                if os.path.exists(rec_path):
                    with open(rec_path) as f:
                        rec = json.load(f)
                    styles[style] = {k: rec.get(k) for k in (
                        "status", "error", "opset", "torch", "external_data", "bytes",
                        "ort", "ort_max_abs_err", "ort_error", "state_digest",
                        "ref_diff_vs_torch113",
                        "dropped_inputs", "num_nodes", "num_functions", "ops",
                        "inputs", "outputs") if k in rec}
            manifest["models"][entry] = {
                "module": mod.__name__ + ".py",
                "source": mod.SOURCE,
                "level": mod.LEVEL,
                "config": kw,
                "expect": getattr(mod, "EXPECT_BY_VARIANT", {}).get(entry, mod.EXPECT),
                "input_doc": mod.INPUT_DOC,
                "notes": mod.NOTES,
                "styles": styles,
            }
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    total = 0
    for root, _, files in os.walk(HERE):
        if "__pycache__" in root:
            continue
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"manifest: {len(manifest['models'])} entries, zoo is {total / 1e6:.2f} MB")


def ort_table():
    """The README's export table (Markdown) from manifest.json."""
    with open(os.path.join(HERE, "manifest.json")) as f:
        manifest = json.load(f)
    print("| model | torch113 | torch2-legacy | torch2 (dynamo) | PyTorch 1.13 vs 2.x |")
    print("|---|---|---|---|---|")
    for entry, m in sorted(manifest["models"].items()):
        cells, diff = [], 0.0
        for style in STYLES:
            i = m["styles"].get(style, {})
            if i.get("status") != "exported":
                cells.append("export failed: " + str(i.get("error", "-"))[:80])
                continue
            err = i.get("ort_max_abs_err")
            cells.append(f"{i['opset']}, {i['num_nodes']} nodes, "
                         + (f"{err:.1e}" if err is not None else str(i.get("ort", "-")))
                         + (", +data" if i.get("external_data") else ""))
            diff = max(diff, i.get("ref_diff_vs_torch113") or 0.0)
        print(f"| {entry} | " + " | ".join(cells) + f" | {diff:.1e} |")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--styles", default=",".join(STYLES))
    ap.add_argument("--models", default="", help="comma-separated entries or module names")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ort", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-ort", action="store_true", help="skip the onnxruntime check")
    ap.add_argument("--ort-table", action="store_true",
                    help="print the README's export table from manifest.json and exit")
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n]
    styles = [s for s in args.styles.split(",") if s]
    if args.ort_table:
        return ort_table()
    if args.worker:
        return worker(styles[0], names)
    if args.ort:
        return ort_check(names)
    rc = 0
    for style in styles:
        py = STYLES[style]
        if not os.path.exists(py):
            print(f"[{style}] {py} not found, skipped")
            continue
        cmd = [py, os.path.abspath(__file__), "--worker", "--styles", style]
        if names:
            cmd += ["--models", ",".join(names)]
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
        rc |= subprocess.call(cmd, env=env)
    if not args.no_ort and os.path.exists(VENV_PY):
        cmd = [VENV_PY, os.path.abspath(__file__), "--ort"]
        if names:
            cmd += ["--models", ",".join(names)]
        subprocess.call(cmd, env=dict(os.environ, OMP_NUM_THREADS="1"))
    write_manifest()
    return rc


if __name__ == "__main__":
    sys.exit(main())
