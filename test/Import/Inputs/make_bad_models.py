#!/usr/bin/env python3
"""Writes malformed ONNX models for the importer's error tests.

Usage: make_bad_models.py OUTDIR

Each model is small and differs from a valid one in exactly one way, so the
test that uses it checks one diagnostic. Models are written with
onnx.helper (onnx 1.12) and not run through onnx.checker, which would reject
most of them. The output is deterministic.
"""

import os
import random
import struct
import sys

import onnx
from onnx import TensorProto, helper

OPSET = [helper.make_opsetid("", 17)]


def model(nodes, inputs, outputs, initializers=(), name="bad"):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=OPSET, ir_version=8,
                             producer_name="make_bad_models.py")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def relu_plus_weight(weight):
    """y = Relu(x) + w, with `weight` as the initializer w."""
    return model(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "w"], ["y"], name="add_w")],
        [f32("x", [2, 3])], [f32("y", [2, 3])], [weight])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {}

    # An op MegaGraph does not implement, on a named node.
    models["unsupported_lstm"] = model(
        [helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="encoder/lstm",
                          hidden_size=4)],
        [f32("x", [5, 2, 3]), f32("w", [1, 16, 3]), f32("r", [1, 16, 4])],
        [f32("y", [5, 1, 2, 4])])

    # A graph input with no shape at all (not even a rank).
    no_shape = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    models["input_no_shape"] = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [no_shape], [f32("y", [2, 3])])

    # A graph input of an element type the importer does not take.
    models["input_string"] = model(
        [helper.make_node("Identity", ["s"], ["y"], name="id")],
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])

    # Weights stored in a side file, as torch.onnx.export writes
    # model.onnx.data: the file is missing, present (w = 0..5 after 8 bytes
    # of padding), too short, or named by a path outside the model's
    # directory.
    def external(location, offset=8, length=24):
        t = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [0.0] * 6)
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(offset)),
                           ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        return relu_plus_weight(t)
    models["external_data"] = external("weights.bin")
    models["external_ok"] = external("external_ok.onnx.data")
    with open(os.path.join(out, "external_ok.onnx.data"), "wb") as f:
        f.write(b"\0" * 8 + struct.pack("<6f", *range(6)))
    models["external_short"] = external("external_short.onnx.data")
    with open(os.path.join(out, "external_short.onnx.data"), "wb") as f:
        f.write(b"\0" * 8 + struct.pack("<3f", *range(3)))
    models["external_escape"] = external("../weights.bin")
    models["external_absolute"] = external("/weights.bin")
    models["external_bad_offset"] = external("external_ok.onnx.data",
                                             offset="x8")

    # Float weights with 5 values for a 2x3 shape, as raw bytes and as
    # float_data.
    # (helper.make_tensor would refuse them: build the protos by hand.)
    raw = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3],
                      raw_data=struct.pack("<5f", *range(5)))
    models["float_raw_short"] = relu_plus_weight(raw)
    listed = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3],
                         float_data=[1.0] * 5)
    models["float_data_short"] = relu_plus_weight(listed)

    # A negative dimension in an initializer.
    negative = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [0.0] * 6)
    negative.dims[1] = -3
    models["negative_dim"] = relu_plus_weight(negative)

    # A valid protobuf that is not a model: no graph.
    with open(os.path.join(out, "no_graph.onnx"), "wb") as f:
        f.write(helper.make_opsetid("", 17).SerializeToString())

    # Random bytes (seeded).
    with open(os.path.join(out, "random.onnx"), "wb") as f:
        f.write(random.Random(1234).randbytes(4096))

    for name, m in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
