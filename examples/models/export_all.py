"""Export all example Graph Transformer models and print a summary.

Usage (from the repo root):
    /usr/bin/python3 examples/models/export_all.py

Writes, for each model NAME in (graphormer, graphgps, plain_gt):
    examples/models/NAME/model.onnx
    examples/models/NAME/inputs/<input>.npy     reference inputs
    examples/models/NAME/outputs/logits.npy     PyTorch reference output

Every model is checked with onnx.checker (full_check). If onnxruntime happens to be
importable, the ONNX files are also run on the reference inputs and compared with the
PyTorch outputs (optional; not a dependency).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import graphgps  # noqa: E402
import graphormer  # noqa: E402
import plain_gt  # noqa: E402

MODELS = [("graphormer", graphormer), ("graphgps", graphgps), ("plain_gt", plain_gt)]
MAX_BYTES = 300 * 1024


def main():
    ok = True
    for name, mod in MODELS:
        summary = mod.main()
        print(common.format_summary(summary))
        print("   onnx.checker: ok")
        if summary["size"] > MAX_BYTES:
            print(f"   WARNING: {summary['size']} bytes > {MAX_BYTES}")
            ok = False
        err = common.check_with_onnxruntime(os.path.dirname(summary["path"]))
        print("   onnxruntime: " + ("not installed, skipped" if err is None
                                     else f"matches PyTorch, max abs err {err:.2e}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
