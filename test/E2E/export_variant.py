#!/usr/bin/env python3
"""Re-exports one of the example models with another ONNX opset, so tests
can check that MegaGraph handles exporter variants (e.g. opset 13, where
LayerNormalization is decomposed into ReduceMean/Sub/Pow/Sqrt/Div).

usage: export_variant.py MODEL OPSET OUT_DIR   (MODEL: graphormer|graphgps|plain_gt)
Writes OUT_DIR/model.onnx, OUT_DIR/inputs/*.npy, OUT_DIR/outputs/*.npy.
"""
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "models"))

import common  # noqa: E402


def main():
    name, opset, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    module = importlib.import_module(name)
    export = common.export

    def with_opset(model, inputs, path_prefix, dynamic_axes=None, opset=17,
                   output_names=("logits",)):
        return export(model, inputs, out, dynamic_axes=dynamic_axes,
                      opset=int(sys.argv[2]), output_names=output_names)

    common.export = with_opset
    summary = module.main(out)
    print(f"{name}: opset {summary['opset']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
