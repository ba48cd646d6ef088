"""Writes the models of truncated-models.test into OUT_DIR, or with
--every-cut runs COMPILER on every prefix of MODEL's first 2000 and last
200 bytes and prints how many were refused with exactly one line and exit
code 1 (the first that was not is printed instead).

usage: truncated-models.py MODEL OUT_DIR
       truncated-models.py --every-cut MODEL OUT_DIR COMPILER
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_models(model_path, out):
    m = onnx.load(model_path)
    b = m.SerializeToString()
    g = m.graph.SerializeToString()
    end = b.find(g) + len(g)
    assert end > len(g) and end < len(b), "graph field not found"
    open(os.path.join(out, "cut_after_graph.onnx"), "wb").write(b[:end])
    half = onnx.ModelProto()
    half.CopyFrom(m)
    del half.graph.node[len(half.graph.node) // 2:]
    open(os.path.join(out, "half_nodes.onnx"), "wb").write(half.SerializeToString())

    open(os.path.join(out, "w.bin"), "wb").write(b"\0" * 20)
    for name, offset, length in (("external_past_end", "1000", "24"),
                                 ("external_huge_length", "8", str(2**63 - 1))):
        w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", offset), ("length", length)):
            e = w.external_data.add()
            e.key, e.value = k, v
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
        graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])],
                                  "g", [x], [y], [w])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        open(os.path.join(out, name + ".onnx"), "wb").write(model.SerializeToString())


def every_cut(model_path, out, compiler):
    data = open(model_path, "rb").read()
    cuts = list(range(1, 2001)) + list(range(len(data) - 200, len(data)))
    path = os.path.join(out, "cut.onnx")
    for n in cuts:
        open(path, "wb").write(data[:n])
        r = subprocess.run([compiler, path, "--emit=mlir", "-o", os.devnull],
                           capture_output=True, text=True)
        lines = (r.stdout + r.stderr).splitlines()
        if r.returncode != 1 or len(lines) != 1:
            print("cut at %d bytes: exit %d, %d lines: %s"
                  % (n, r.returncode, len(lines), lines[:3]))
            return
    print("%d cuts: every one refused with one line" % len(cuts))


if __name__ == "__main__":
    if sys.argv[1] == "--every-cut":
        every_cut(*sys.argv[2:5])
    else:
        write_models(*sys.argv[1:3])
