#!/usr/bin/env python3
"""Writes ONNX models that break one rule of the ONNX checker each.

Usage: make_checker_models.py OUTDIR

Each model is valid but for one rule (an attribute of the wrong type, two
writers of one tensor, ...), which the importer must refuse rather than read
as something else. Written with onnx.helper (onnx 1.12), not run through
onnx.checker. The output is deterministic.
"""

import os
import struct
import sys

import onnx
from onnx import AttributeProto, TensorProto, helper


def model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = helper.make_graph(nodes, "checker", inputs, outputs,
                              initializer=list(initializers))
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_version,
                             producer_name="make_checker_models.py")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def gemm(**attrs):
    """y = Gemm(a, b) with b stored [N, K] (so transB=1 is right)."""
    b = helper.make_tensor("b", TensorProto.FLOAT, [3, 2],
                           [float(i) for i in range(6)])
    return model([helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm",
                                   **attrs)],
                 [f32("a", [4, 2])], [f32("y", [4, 3])], [b])


def softmax(node):
    return model([node], [f32("x", [2, 3])], [f32("y", [2, 3])])


def relu(inputs=("x",), outputs=("y",), name="relu"):
    return helper.make_node("Relu", list(inputs), list(outputs), name=name)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {}

    # Attributes of the wrong type: an int given as a float or a string.
    models["gemm_transb_float"] = gemm(transB=2.5)
    models["softmax_axis_float"] = softmax(
        helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1.0))
    models["softmax_axis_string"] = softmax(
        helper.make_node("Softmax", ["x"], ["y"], name="sm", axis="1"))
    # Declared INT but holding a float value (no `i` field).
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    attr = node.attribute.add()
    attr.name, attr.type, attr.f = "axis", AttributeProto.INT, 1.0
    models["attr_declared_int_holds_float"] = softmax(node)
    # Two value fields at once.
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    attr = node.attribute.add()
    attr.name, attr.type, attr.i, attr.f = "axis", AttributeProto.INT, 1, 0.0
    models["attr_two_values"] = softmax(node)
    # No type and no value.
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    node.attribute.add().name = "axis"
    models["attr_no_value"] = softmax(node)

    # Unknown and duplicated attributes.
    models["attr_unknown"] = gemm(transB=1, transpose_b=1)
    node = helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm", transB=0)
    node.attribute.extend([helper.make_attribute("transB", 1)])
    dup = gemm()
    dup.graph.node[0].CopyFrom(node)
    models["attr_twice"] = dup
    # A required attribute missing (Concat's axis).
    models["attr_required_missing"] = model(
        [helper.make_node("Concat", ["x", "x"], ["y"], name="cat")],
        [f32("x", [2, 3])], [f32("y", [4, 3])])

    # Node arity beyond the schema's.
    models["extra_input"] = model([relu(("x", "x"))], [f32("x", [2, 3])],
                                  [f32("y", [2, 3])])
    models["missing_input"] = model(
        [helper.make_node("Add", ["x"], ["y"], name="add")],
        [f32("x", [2, 3])], [f32("y", [2, 3])])
    models["extra_output"] = model([relu(outputs=("y", "z"))],
                                   [f32("x", [2, 3])], [f32("y", [2, 3])])

    # Two writers of one tensor.
    models["two_writers"] = model(
        [relu(name="first"),
         helper.make_node("Neg", ["x"], ["y"], name="second")],
        [f32("x", [2, 3])], [f32("y", [2, 3])])
    models["writes_graph_input"] = model(
        [relu(outputs=("x",))], [f32("x", [2, 3])], [f32("x", [2, 3])])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [1.0] * 6)
    models["writes_initializer"] = model(
        [relu(outputs=("w",)),
         helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [f32("x", [2, 3])], [f32("y", [2, 3])], [w])
    models["writes_twice_one_node"] = model(
        [helper.make_node("Split", ["x"], ["y", "y"], name="split", axis=0)],
        [f32("x", [4, 3])], [f32("y", [2, 3])])

    # IR version 0 and missing.
    m = model([relu()], [f32("x", [2, 3])], [f32("y", [2, 3])])
    m.ir_version = 0
    models["ir_version_0"] = m
    m = model([relu()], [f32("x", [2, 3])], [f32("y", [2, 3])])
    m.ClearField("ir_version")
    models["ir_version_missing"] = m

    # Graph inputs and initializers.
    add_w = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    models["input_twice"] = model([relu()],
                                  [f32("x", [2, 3]), f32("x", [2, 3])],
                                  [f32("y", [2, 3])])
    models["input_initializer_shape"] = model(
        [add_w], [f32("x", [2, 3]), f32("w", [3, 2])], [f32("y", [2, 3])],
        [w])
    models["input_initializer_type"] = model(
        [add_w],
        [f32("x", [2, 3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT16, [2, 3])],
        [f32("y", [2, 3])], [w])
    models["input_initializer_ok"] = model(
        [add_w], [f32("x", [2, 3]), f32("w", [2, "n"])], [f32("y", [2, 3])],
        [w])
    w2 = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [0.0] * 6)
    models["initializer_twice"] = model([add_w], [f32("x", [2, 3])],
                                        [f32("y", [2, 3])], [w, w2])
    both = helper.make_tensor("w", TensorProto.FLOAT, [2, 3],
                              struct.pack("<6f", *([1.0] * 6)), raw=True)
    both.float_data.extend([2.0] * 6)
    models["initializer_raw_and_float"] = model(
        [add_w], [f32("x", [2, 3])], [f32("y", [2, 3])], [both])

    for name, m in sorted(models.items()):
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
