#!/usr/bin/python3
"""Gradient conformance of `megagraph-compile --gradients` per ONNX op.

For every ONNX node test (Debian's libonnx-testdata by default, or --data
DIR) whose single node is an op the importer supports
(`megagraph-compile --list-onnx-ops`), the test's inputs from
test_data_set_0 become initializers of a generated model: the float inputs
the op is differentiable in are trained parameters, every other input
(integer and index tensors, compile-time operands such as Clip's bounds or
Dropout's ratio, BatchNorm running statistics) is a constant. Each float
output of the op is flattened and all of them are concatenated into one
prediction `pred` of shape [1, T], the scalar function is
`--loss mse` against fixed random targets (sum((pred - y)^2) / T), and the
compiled `grad:<input>` of every trained input is compared with PyTorch
autograd (torch 1.13, float64) of the same function, where each op's
reference is written from its ONNX semantics (REFERENCE below) and must
reproduce the test's expected outputs (rtol 1e-3, atol 1e-5). A gradient
passes when max|got - want| <= 1e-4 * max(max|want|, 1e-3 * c), c being the
largest entry of d loss / d pred of that test (so that gradients that are
zero in exact arithmetic must be zero to within the float32 round-off of
the cotangent's scale).

Many tests are compiled together: each test's nodes and initializers get a
prefix of their own, so one model holds independent one-op subgraphs whose
outputs are concatenated. When a batch fails to compile or run, each of
its tests is compiled alone, so that the failure is attributed to its op.

Tests are skipped only for the reasons in the SKIP_* constants (printed per
test and counted): no float output (comparisons, ArgMax, Shape, ...), no
input the op is differentiable in, element types other than float32 /
float64 (float64 test data is rounded to float32, since gradients are
compiled in float32), opsets below 13 where the op changed since (tests of
ops whose definition did not change are run at opset 13), and inputs where
the gradient is undefined (a NaN or inf in the reference).

Prints one line per test, a per-op table and `ops: P passed, F failed, S
skipped` plus the same counts per test; exits 1 on any failure.

usage: onnx_gradient_tests.py --compiler MEGAGRAPH_COMPILE --work DIR
         [--data NODE_TEST_DIR [--dedup-against DIR]] [--filter REGEX]
         [--batch N] [--jobs J]
         [--negate REGEX]
(--negate flips the sign of the reference gradients of the matching tests,
a negative control: the run then succeeds only if every negated test fails
and no other test does.)
"""

import argparse
import collections
import glob
import io
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
MIN_OPSET = 13
TOL = 1e-4
FLOOR = 1e-3
NEGATE = ""  # --negate

SKIP_NO_FLOAT_OUTPUT = "no float output (non-differentiable)"
SKIP_NO_DIFF_INPUT = "no input the op is differentiable in"
SKIP_ELEM = "element type other than float32/float64 or a supported integer"
SKIP_OPSET = "opset below 13, op changed since"
SKIP_UNDEFINED = "gradient undefined at the test's inputs (NaN/inf)"
SKIP_NOT_TENSOR = "sequence or optional value"
SKIP_TRAINING = "training-mode variant (the importer takes eval() exports)"
SKIP_EMPTY = "empty tensor (nothing to differentiate)"
SKIP_MULTI_NODE = "more than one node"
SKIP_NO_REFERENCE = "no PyTorch reference for this variant"

# Ops whose definition at the test's old opset is the one of opset 13: their
# tests run at opset 13.
SAME_AT_13 = {"Celu", "Cos", "Sin", "Elu", "Selu", "HardSigmoid", "Softplus",
              "Softsign", "ThresholdedRelu", "Pow", "CumSum", "Einsum",
              "LeakyRelu", "PRelu", "Mish"}

# Float inputs an op is not differentiable in, by input index, with why.
CONSTANT_INPUTS = {
    "Clip": {1: "bound (compile-time operand)",
             2: "bound (compile-time operand)"},
    "Dropout": {1: "ratio (compile-time operand)"},
    "BatchNormalization": {3: "running mean (buffer)",
                           4: "running variance (buffer)"},
    "Pad": {2: "constant value (compile-time operand)"},
    "Range": {0: "bound", 1: "bound", 2: "bound"},
}


def attrs_of(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _axes(node, x, ins, index):
    """Reduce axes: the attribute, or input `index` (opset 18 style)."""
    a = attrs_of(node)
    if "axes" in a:
        return list(a["axes"])
    if len(ins) > index and ins[index] is not None and ins[index].numel():
        return [int(v) for v in ins[index].tolist()]
    return None


def _reduce(fn):
    def ref(node, ins, outs):
        x = ins[0]
        a = attrs_of(node)
        axes = _axes(node, x, ins, 1)
        keep = bool(a.get("keepdims", 1))
        if axes is None:
            if a.get("noop_with_empty_axes", 0):
                return [x]
            axes = list(range(x.dim()))
        axes = sorted(ax % x.dim() for ax in axes)
        return [fn(x, axes, keep)]
    return ref


def _prod(x, axes, keep):
    for ax in reversed(axes):
        x = x.prod(ax, keepdim=keep)
    return x


def _slice(node, ins, outs):
    x = ins[0]
    starts, ends = ins[1].tolist(), ins[2].tolist()
    axes = (ins[3].tolist() if len(ins) > 3 and ins[3] is not None
            else list(range(len(starts))))
    steps = (ins[4].tolist() if len(ins) > 4 and ins[4] is not None
             else [1] * len(starts))
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax %= x.dim()
        n = x.shape[ax]
        s = int(max(min(s, 2 ** 62), -2 ** 62))
        e = int(max(min(e, 2 ** 62), -2 ** 62))
        idx = list(range(*slice(s, e, st).indices(n)))
        x = x.index_select(ax, torch.tensor(idx, dtype=torch.long))
    return [x]


def _split(node, ins, outs):
    a = attrs_of(node)
    ax = a.get("axis", 0)
    sizes = [o.shape[ax] for o in outs]
    return list(torch.split(ins[0], sizes, dim=ax))


def _gather(node, ins, outs):
    x, idx = ins
    ax = attrs_of(node).get("axis", 0) % x.dim()
    i = idx.long() % x.shape[ax]
    y = x.index_select(ax, i.reshape(-1))
    return [y.reshape(x.shape[:ax] + i.shape + x.shape[ax + 1:])]


def _gather_elements(node, ins, outs):
    x, idx = ins
    ax = attrs_of(node).get("axis", 0) % x.dim()
    return [torch.gather(x, ax, idx.long() % x.shape[ax])]


def _gather_nd(node, ins, outs):
    x, idx = ins
    if attrs_of(node).get("batch_dims", 0):
        return None
    idx = idx.long()
    return [x[tuple(idx[..., k] for k in range(idx.shape[-1]))]]


def _scatter_elements(node, ins, outs):
    x, idx, upd = ins
    a = attrs_of(node)
    ax = a.get("axis", 0) % x.dim()
    idx = idx.long() % x.shape[ax]
    red = a.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    if red == "none":
        return [x.scatter(ax, idx, upd)]
    if red == "add":
        return [x.scatter_add(ax, idx, upd)]
    return [x.scatter_reduce(ax, idx, upd, {"mul": "prod", "max": "amax",
                                            "min": "amin"}[red])]


def _scatter_nd(node, ins, outs):
    x, idx, upd = ins
    red = attrs_of(node).get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    idx = idx.long()
    key = tuple(idx[..., k] for k in range(idx.shape[-1]))
    if red == "none":
        return [x.index_put(key, upd)]
    if red == "add":
        return [x.index_put(key, upd, accumulate=True)]
    if red == "mul":
        y = x
        for pos in np.ndindex(*idx.shape[:-1]):
            k = tuple(int(v) for v in idx[pos].tolist())
            y = y.index_put(tuple(torch.tensor(v) for v in k), y[k] * upd[pos])
        return [y]
    return None


def _layer_norm(node, ins, outs):
    a = attrs_of(node)
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    ax = a.get("axis", -1) % x.dim()
    dims = list(range(ax, x.dim()))
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    inv = 1.0 / torch.sqrt(var + a.get("epsilon", 1e-5))
    y = (x - mean) * inv * scale
    if bias is not None:
        y = y + bias
    return [y, mean, inv][:len(outs)]


def _batch_norm(node, ins, outs):
    x, scale, b, mean, var = ins
    eps = attrs_of(node).get("epsilon", 1e-5)
    shape = [1, -1] + [1] * (x.dim() - 2)
    return [(x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)
            * scale.view(shape) + b.view(shape)]


def _gemm(node, ins, outs):
    a = attrs_of(node)
    A, B = ins[0], ins[1]
    if a.get("transA", 0):
        A = A.t()
    if a.get("transB", 0):
        B = B.t()
    y = a.get("alpha", 1.0) * (A @ B)
    if len(ins) > 2 and ins[2] is not None:
        y = y + a.get("beta", 1.0) * ins[2]
    return [y]


def _softmax(fn):
    def ref(node, ins, outs):
        return [fn(ins[0], dim=attrs_of(node).get("axis", -1))]
    return ref


def _variadic(fn):
    def ref(node, ins, outs):
        y = ins[0]
        for t in ins[1:]:
            y = fn(y, t)
        return [y]
    return ref


def _cumsum(node, ins, outs):
    a = attrs_of(node)
    x = ins[0]
    ax = int(ins[1].reshape(-1)[0]) % x.dim()
    if a.get("reverse", 0):
        x = x.flip(ax)
    y = x.cumsum(ax)
    if a.get("exclusive", 0):
        y = y - x
    if a.get("reverse", 0):
        y = y.flip(ax)
    return [y]


def _pad(node, ins, outs):
    a = attrs_of(node)
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    x = ins[0]
    pads = [int(v) for v in ins[1].tolist()]
    value = float(ins[2]) if len(ins) > 2 and ins[2] is not None else 0.0
    axes = (list(range(x.dim())) if len(ins) < 4 or ins[3] is None
            else [int(v) % x.dim() for v in ins[3].tolist()])
    n = len(axes)
    for k, ax in enumerate(axes):
        lo, hi = pads[k], pads[k + n]
        size = x.shape[ax]
        if lo == hi == 0:
            continue
        if mode == "constant":
            idx = list(range(-lo, size + hi))
            valid = torch.tensor([0 <= i < size for i in idx])
            src = torch.tensor([min(max(i, 0), size - 1) for i in idx])
            y = x.index_select(ax, src)
            shape = [1] * x.dim()
            shape[ax] = len(idx)
            x = torch.where(valid.view(shape), y,
                            torch.full_like(y, value))
            continue
        def source(i):
            if mode == "edge":
                return min(max(i, 0), size - 1)
            if mode == "wrap":
                return i % size
            period = 2 * (size - 1)  # reflect
            i = abs(i) % period
            return period - i if i >= size else i
        src = torch.tensor([source(i) for i in range(-lo, size + hi)])
        x = x.index_select(ax, src)
    return [x]


def _einsum(node, ins, outs):
    eq = attrs_of(node)["equation"]
    eq = eq.decode() if isinstance(eq, bytes) else eq
    return [torch.einsum(eq.replace(" ", ""), *ins)]


def _trilu(node, ins, outs):
    k = int(ins[1]) if len(ins) > 1 and ins[1] is not None else 0
    fn = torch.triu if attrs_of(node).get("upper", 1) else torch.tril
    return [fn(ins[0], k)]


def _clip(node, ins, outs):
    lo = None if len(ins) < 2 or ins[1] is None else float(ins[1])
    hi = None if len(ins) < 3 or ins[2] is None else float(ins[2])
    if lo is None and hi is None:
        return [ins[0] + 0]
    return [torch.clamp(ins[0], min=lo, max=hi)]


def _rms_norm(node, ins, outs):
    a = attrs_of(node)
    x, scale = ins
    ax = a.get("axis", -1) % x.dim()
    dims = list(range(ax, x.dim()))
    rms = torch.sqrt((x * x).mean(dims, keepdim=True) + a.get("epsilon", 1e-5))
    return [x / rms * scale]


def _attention(node, ins, outs):
    """ONNX Attention (opset 23) as defined (and as ONNX >= 1.19 computes
    it): 3-D inputs are split into heads as [B, S, H, D] and transposed,
    grouped key/value heads are repeated in place, the bias (mask, causal)
    is added before the softcap."""
    a = attrs_of(node)
    ins = ins + [None] * (6 - len(ins))
    q, k, v, mask, past_k, past_v = ins
    rank = q.dim()

    def split(x, heads):
        b, n, d = x.shape
        return x.reshape(b, n, heads, d // heads).transpose(1, 2)

    if rank == 3:
        q = split(q, a["q_num_heads"])
        k, v = split(k, a["kv_num_heads"]), split(v, a["kv_num_heads"])
    if past_k is not None:
        k = torch.cat([past_k, k], 2)
    if past_v is not None:
        v = torch.cat([past_v, v], 2)
    present_k, present_v = k, v
    sq, skv = q.shape[2], k.shape[2]
    bias = torch.zeros(sq, skv, dtype=q.dtype)
    if a.get("is_causal", 0):
        bias = bias.masked_fill(~torch.ones(sq, skv, dtype=torch.bool).tril(),
                                float("-inf"))
    if mask is not None:
        bias = (bias.masked_fill(~mask, float("-inf"))
                if mask.dtype == torch.bool else bias + mask)
    reps = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(reps, 1)
    v = v.repeat_interleave(reps, 1)
    qk = torch.matmul(q, k.transpose(2, 3)) * a.get(
        "scale", 1 / np.sqrt(q.shape[3]))
    with_bias = qk + bias
    mode = a.get("qk_matmul_output_mode", 0)
    if mode == 1:
        qk = with_bias
    if a.get("softcap", 0) > 0:
        with_bias = a["softcap"] * torch.tanh(with_bias / a["softcap"])
        if mode == 2:
            qk = with_bias
    p = torch.softmax(with_bias, -1)
    if mode == 3:
        qk = p
    y = torch.matmul(p, v)
    if rank == 3:
        y = y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1)
    return [y, present_k, present_v, qk][:len(outs)]


def wrong_onnx_reference(case):
    """Whether the test's expected outputs come from ONNX 1.18's Attention
    reference where it is wrong (3-D heads split without the transpose, GQA
    heads tiled): test/Conformance/onnx_node_tests.py checks those against
    the corrected definition, as REFERENCE does."""
    if case.op != "Attention":
        return False
    q, k = case.inputs[0], case.inputs[1]
    return q.ndim == 3 or q.shape[1] != k.shape[1]


def _unary(fn):
    return lambda node, ins, outs: [fn(ins[0], attrs_of(node))]


def _to_shape(node, ins, outs):
    return [ins[0].reshape(outs[0].shape)]


REFERENCE = {
    "Abs": _unary(lambda x, a: x.abs()),
    "Neg": _unary(lambda x, a: -x),
    "Exp": _unary(lambda x, a: x.exp()),
    "Log": _unary(lambda x, a: x.log()),
    "Sqrt": _unary(lambda x, a: x.sqrt()),
    "Reciprocal": _unary(lambda x, a: 1.0 / x),
    "Sigmoid": _unary(lambda x, a: torch.sigmoid(x)),
    "Tanh": _unary(lambda x, a: torch.tanh(x)),
    "Erf": _unary(lambda x, a: torch.erf(x)),
    "Sin": _unary(lambda x, a: torch.sin(x)),
    "Cos": _unary(lambda x, a: torch.cos(x)),
    "Relu": _unary(lambda x, a: torch.relu(x)),
    "Ceil": _unary(lambda x, a: torch.ceil(x)),
    "Floor": _unary(lambda x, a: torch.floor(x)),
    "Sign": _unary(lambda x, a: torch.sign(x)),
    "Identity": _unary(lambda x, a: x),
    "Dropout": lambda node, ins, outs: [ins[0]],
    "Cast": _unary(lambda x, a: x),
    "Elu": _unary(lambda x, a: torch.where(
        x >= 0, x, a.get("alpha", 1.0) * (torch.exp(x) - 1))),
    "Selu": _unary(lambda x, a: a.get("gamma", 1.05070102214813232421875)
                   * torch.where(x > 0, x, a.get(
                       "alpha", 1.67326319217681884765625)
                       * (torch.exp(x) - 1))),
    "Celu": _unary(lambda x, a: torch.clamp(x, min=0) + torch.clamp(
        a.get("alpha", 1.0) * (torch.exp(x / a.get("alpha", 1.0)) - 1),
        max=0)),
    "LeakyRelu": _unary(lambda x, a: torch.where(
        x >= 0, x, a.get("alpha", 0.01) * x)),
    "HardSigmoid": _unary(lambda x, a: torch.clamp(
        a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)),
    "HardSwish": _unary(lambda x, a: x * torch.clamp(x / 6 + 0.5, 0, 1)),
    "Softplus": _unary(lambda x, a: torch.log(1 + torch.exp(x))),
    "Softsign": _unary(lambda x, a: x / (1 + x.abs())),
    "ThresholdedRelu": _unary(lambda x, a: torch.where(
        x > a.get("alpha", 1.0), x, torch.zeros_like(x))),
    "Mish": _unary(lambda x, a: x * torch.tanh(torch.log(1 + torch.exp(x)))),
    "Gelu": _unary(lambda x, a: torch.nn.functional.gelu(
        x, approximate=(a.get("approximate", b"none").decode()
                        if isinstance(a.get("approximate", b"none"), bytes)
                        else a.get("approximate", "none")))),
    "PRelu": lambda node, ins, outs: [torch.where(ins[0] < 0,
                                                  ins[1] * ins[0], ins[0])],
    "Clip": _clip,
    "Add": _variadic(torch.add),
    "Sub": _variadic(torch.sub),
    "Mul": _variadic(torch.mul),
    "Div": _variadic(torch.div),
    "Pow": _variadic(torch.pow),
    "Mod": lambda node, ins, outs: ([torch.fmod(ins[0], ins[1])]
                                    if attrs_of(node).get("fmod", 0) else None),
    "Max": _variadic(torch.maximum),
    "Min": _variadic(torch.minimum),
    "Sum": _variadic(torch.add),
    "Mean": lambda node, ins, outs: [sum(ins) / len(ins)],
    "Where": lambda node, ins, outs: [torch.where(ins[0].bool(), ins[1],
                                                  ins[2])],
    "MatMul": lambda node, ins, outs: [torch.matmul(ins[0], ins[1])],
    "Gemm": _gemm,
    "Einsum": _einsum,
    "Reshape": _to_shape,
    "Flatten": _to_shape,
    "Squeeze": _to_shape,
    "Unsqueeze": _to_shape,
    "Expand": lambda node, ins, outs: [torch.broadcast_to(ins[0],
                                                          outs[0].shape)],
    "Transpose": lambda node, ins, outs: [ins[0].permute(
        *attrs_of(node).get("perm", list(range(ins[0].dim()))[::-1]))],
    "Tile": lambda node, ins, outs: [ins[0].repeat(*ins[1].tolist())],
    "Concat": lambda node, ins, outs: [torch.cat(
        ins, dim=attrs_of(node)["axis"])],
    "Split": _split,
    "Slice": _slice,
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements,
    "ScatterND": _scatter_nd,
    "Softmax": _softmax(torch.softmax),
    "LogSoftmax": _softmax(torch.log_softmax),
    "LayerNormalization": _layer_norm,
    "RMSNormalization": _rms_norm,
    "Attention": _attention,
    "BatchNormalization": _batch_norm,
    "CumSum": _cumsum,
    "Pad": _pad,
    "Trilu": _trilu,
    "ReduceSum": _reduce(lambda x, d, k: x.sum(d, keepdim=k)),
    "ReduceMean": _reduce(lambda x, d, k: x.mean(d, keepdim=k)),
    "ReduceMax": _reduce(lambda x, d, k: x.amax(d, keepdim=k)),
    "ReduceMin": _reduce(lambda x, d, k: x.amin(d, keepdim=k)),
    "ReduceProd": _reduce(_prod),
    "ReduceL1": _reduce(lambda x, d, k: x.abs().sum(d, keepdim=k)),
    "ReduceL2": _reduce(lambda x, d, k: (x * x).sum(d, keepdim=k).sqrt()),
    "ReduceSumSquare": _reduce(lambda x, d, k: (x * x).sum(d, keepdim=k)),
    "ReduceLogSum": _reduce(lambda x, d, k: x.sum(d, keepdim=k).log()),
    "ReduceLogSumExp": _reduce(lambda x, d, k: torch.logsumexp(
        x, d, keepdim=k)),
}

# Element types of the test data that the generated models can hold
# (float64 data is rounded to float32).
ELEMS = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8,
                               np.int32, np.int64, np.bool_)}
# Ops whose semantics do not depend on the element type: their integer node
# tests also run with the data input(s) (by index) as float32.
AS_FLOAT = {"Trilu": (0,), "Pad": (0,), "Where": (1, 2)}


def is_float(v):
    """Whether a test value is a float32 tensor (None: an omitted output)."""
    return v is not None and v.dtype == np.float32


def read_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


class Case:
    """One node test: its node, input values (None for an omitted optional
    input), expected output shapes and which inputs are trained."""

    def __init__(self, name, model, node, inputs, outputs):
        self.name, self.model, self.node = name, model, node
        self.op = node.op_type
        self.inputs, self.outputs = inputs, outputs
        self.trained = []
        self.constants = []
        self.status, self.detail = None, ""


def load_case(test_dir, supported):
    """A Case, or (name, op, skip reason); None when the op is unsupported."""
    name = os.path.basename(test_dir)
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    nodes = list(model.graph.node)
    if any(n.op_type not in supported for n in nodes):
        return None
    op = nodes[0].op_type if len(nodes) == 1 else "+".join(
        n.op_type for n in nodes)
    if len(nodes) != 1:
        return (name, op, SKIP_MULTI_NODE)
    node = nodes[0]
    opset = opset_of(model)
    if opset is None or opset < MIN_OPSET and op not in SAME_AT_13:
        return (name, op, SKIP_OPSET)
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.type.WhichOneof("value") != "tensor_type":
            return (name, op, SKIP_NOT_TENSOR)
        # Element types newer than Debian's onnx 1.12 (float8, int4, ...).
        if vi.type.tensor_type.elem_type > TensorProto.BFLOAT16:
            return (name, op, SKIP_ELEM)
    data = os.path.join(test_dir, "test_data_set_0")
    graph_inputs = [i.name for i in model.graph.input]
    values = {n: read_tensor(os.path.join(data, "input_%d.pb" % k))
              for k, n in enumerate(graph_inputs)}
    inputs = [values[n] if n else None for n in node.input]
    # By position among the node's outputs; None for an omitted one.
    expected = {vi.name: read_tensor(os.path.join(data, "output_%d.pb" % k))
                for k, vi in enumerate(model.graph.output)}
    outputs = [expected.get(n) if n else None for n in node.output]
    for v in inputs + outputs:
        if v is not None and v.dtype not in ELEMS:
            return (name, op, SKIP_ELEM)
    attrs = attrs_of(node)
    if (attrs.get("training_mode") or op == "Dropout" and len(inputs) > 2
            and inputs[2] is not None and bool(inputs[2])):
        return (name, op, SKIP_TRAINING)
    variant = ""
    for k in AS_FLOAT.get(op, ()):
        if k < len(inputs) and inputs[k] is not None \
                and inputs[k].dtype.kind in "iu":
            inputs[k] = inputs[k].astype(np.float32)
            outputs = [None if o is None else o.astype(np.float32)
                       for o in outputs]
            variant = " (integer data as float32)"
    inputs = [v.astype(np.float32) if v is not None and v.dtype == np.float64
              else v for v in inputs]
    outputs = [v.astype(np.float32) if v is not None and v.dtype == np.float64
               else v for v in outputs]
    if any(v is not None and v.dtype.kind == "f" and v.size == 0
           for v in inputs + outputs):
        return (name, op, SKIP_EMPTY)
    if op == "Cast" and (attrs_of(node)["to"] != TensorProto.FLOAT
                         or inputs[0].dtype != np.float32):
        return (name, op, SKIP_NO_DIFF_INPUT if inputs[0].dtype != np.float32
                else SKIP_NO_FLOAT_OUTPUT)
    if not any(is_float(v) for v in outputs):
        return (name, op, SKIP_NO_FLOAT_OUTPUT)
    if op not in REFERENCE:
        return (name, op, SKIP_NO_REFERENCE)
    case = Case(name, model, node, inputs, outputs)
    case.variant = variant
    constant = CONSTANT_INPUTS.get(op, {})
    for k, v in enumerate(inputs):
        if v is None:
            continue
        if v.dtype == np.float32 and k not in constant:
            case.trained.append(k)
        else:
            case.constants.append(
                (k, constant.get(k, "%s (non-differentiable)" % v.dtype)))
    if not case.trained:
        return (name, op, SKIP_NO_DIFF_INPUT)
    return case


def reference(case, targets, total):
    """PyTorch float64: (loss contribution's gradient per trained input,
    the largest |d loss / d pred|), or None without a reference."""
    ins = []
    for k, v in enumerate(case.inputs):
        if v is None:
            ins.append(None)
            continue
        t = torch.from_numpy(np.array(v))
        if v.dtype == np.float32:
            t = t.double().requires_grad_(k in case.trained)
        ins.append(t)
    outs = REFERENCE[case.op](case.node, ins, case.outputs)
    if outs is None:
        return None
    for o, want in zip(outs, case.outputs):
        if is_float(want) and not wrong_onnx_reference(case) \
                and not np.allclose(
                o.detach().numpy(), want, rtol=1e-3, atol=1e-5):
            raise ValueError("its forward differs from the test's output")
    flat = torch.cat([o.reshape(-1) for o, want in zip(outs, case.outputs)
                      if is_float(want)])
    y = torch.from_numpy(targets).double()
    loss = ((flat - y) ** 2).sum() / total
    trained = [ins[k] for k in case.trained]
    grads = torch.autograd.grad(loss, trained, allow_unused=True)
    cot = float((2 * (flat - y) / total).abs().max())
    return [np.zeros(t.shape) if g is None else g.numpy()
            for t, g in zip(trained, grads)], cot


def add_case(nodes, inits, preds, case, prefix):
    """Adds CASE's node under PREFIX to a combined graph; its float outputs
    are flattened to [1, n] and appended to PREDS."""
    rename = {}
    for k, v in enumerate(case.inputs):
        if v is None:
            continue
        n = "%s_in%d" % (prefix, k)
        rename[case.node.input[k]] = n
        inits.append(numpy_helper.from_array(np.array(v, order="C"), n))
    node = onnx.NodeProto()
    node.CopyFrom(case.node)
    node.name = prefix
    for k, n in enumerate(node.input):
        if n:
            node.input[k] = rename[n]
    for k, n in enumerate(node.output):
        if n:
            node.output[k] = "%s_out%d" % (prefix, k)
    nodes.append(node)
    for k, want in enumerate(case.outputs):
        if not is_float(want):
            continue
        shape = "%s_shape%d" % (prefix, k)
        inits.append(numpy_helper.from_array(
            np.array([1, want.size], np.int64), shape))
        flat = "%s_flat%d" % (prefix, k)
        nodes.append(helper.make_node("Reshape", [node.output[k], shape],
                                      [flat]))
        preds.append((flat, want.size))


def build_model(cases, path):
    nodes, inits, preds = [], [], []
    for i, case in enumerate(cases):
        add_case(nodes, inits, preds, case, "t%d" % i)
    total = sum(n for _, n in preds)
    nodes.append(helper.make_node("Concat", [p for p, _ in preds], ["pred"],
                                  axis=1))
    graph = helper.make_graph(nodes, "gradient_conformance", [], [
        helper.make_tensor_value_info("pred", TensorProto.FLOAT, [1, total])],
        inits)
    opset = max(MIN_OPSET, max(
        o.version for c in cases for o in c.model.opset_import
        if o.domain in ("", "ai.onnx")))
    model = helper.make_model(graph, producer_name="onnx_gradient_tests",
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, path)
    return total


def run_batch(compiler, cases, work, log):
    """Compiles and runs CASES as one model; returns the compiled
    gradients {(case index, input index): array}, or an error string."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    total = build_model(cases, path)
    frozen = ["t%d_in%d" % (i, k) for i, c in enumerate(cases)
              for k, _ in c.constants if c.inputs[k].dtype.kind == "f"]
    exe = os.path.join(work, "grad")
    cmd = [compiler, path, "--gradients", "--loss", "mse", "--emit=exe",
           "-o", exe]
    if frozen:
        cmd += ["--freeze", "|".join(frozen)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    log.write("$ %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    if r.returncode:
        return "compile: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    rng = np.random.default_rng(7)
    targets = rng.standard_normal((1, total)).astype(np.float32)
    np.save(os.path.join(work, "labels.npy"), targets)
    np.save(os.path.join(work, "label_mask.npy"), np.ones((1,), bool))
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([exe, "--mode", "infer", "--quiet", "--output-dir", out,
                        "--input", "labels=" + os.path.join(work, "labels.npy"),
                        "--input", "label_mask="
                        + os.path.join(work, "label_mask.npy")],
                       capture_output=True, text=True,
                       env=dict(os.environ, MEGAGRAPH_NUM_THREADS="1"))
    log.write(r.stdout + r.stderr)
    if r.returncode:
        return "run: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    got, offset = {}, 0
    for i, c in enumerate(cases):
        size = sum(o.size for o in c.outputs if is_float(o))
        c.targets = targets[0, offset:offset + size]
        c.total = total
        offset += size
        for k in c.trained:
            p = os.path.join(out, "grad:t%d_in%d.npy" % (i, k))
            if c.op == "Identity":
                # An Identity of an initializer is the parameter named by
                # its output (docs/importer.md, tied initializers).
                p = os.path.join(out, "grad:t%d_out0.npy" % i)
            if os.path.exists(p):
                got[(i, k)] = np.load(p)
    return got


def check(case, got_of):
    """Sets case.status (pass/fail/skip) from the compiled gradients."""
    try:
        ref = reference(case, case.targets, case.total)
    except Exception as e:  # a reference that cannot follow the test
        case.status, case.detail = "fail", "reference: %s" % e
        return
    if ref is None:
        case.status, case.detail = "skip", SKIP_NO_REFERENCE
        return
    want, cot = ref
    if NEGATE and re.search(NEGATE, case.name):
        want = [-w for w in want]
    if any(not np.all(np.isfinite(w)) for w in want):
        case.status, case.detail = "skip", SKIP_UNDEFINED
        return
    worst, bad, zero_note = 0.0, [], ""
    for k, w in zip(case.trained, want):
        g = got_of(k)
        if g is None and not np.any(w):
            # No gradient flows (floor, ceil, sign): the compiled function
            # has no output for it, PyTorch a zero tensor.
            zero_note = "; no gradient flows (zero in the reference)"
            continue
        if g is None:
            bad.append("input %d: no gradient output" % k)
            continue
        if g.shape != w.shape:
            bad.append("input %d: shape %s, want %s" % (k, g.shape, w.shape))
            continue
        rel = float(np.abs(g - w).max(initial=0)
                    / max(np.abs(w).max(initial=0), FLOOR * cot))
        worst = max(worst, rel)
        if not rel <= TOL:
            bad.append("input %d: rel err %.2e" % (k, rel))
    const = "".join("; input %d constant: %s" % c for c in case.constants)
    if bad:
        case.status, case.detail = "fail", "; ".join(bad) + const
    else:
        case.status = "pass"
        case.detail = "%d input(s), rel err %.2e%s%s%s" % (
            len(case.trained), worst, zero_note, const, case.variant)


def run_group(compiler, group, work, log):
    """Compiles and runs GROUP as one model, or each of its tests alone
    when that fails; returns [(case, gradients or error)]."""
    got = run_batch(compiler, group, work, log)
    if not isinstance(got, str) or len(group) == 1:
        return [(c, got if isinstance(got, str) else
                 {k: v for (j, k), v in got.items() if j == i})
                for i, c in enumerate(group)]
    log.write("batch %s failed (%s); compiling its tests alone\n"
              % (work, got))
    out = []
    for j, c in enumerate(group):
        one = run_batch(compiler, [c], "%s_%d" % (work, j), log)
        out.append((c, one if isinstance(one, str) else
                    {k: v for (_, k), v in one.items()}))
    return out


def run_cases(compiler, cases, work, batch, jobs):
    # Round robin, so that the tests of one heavy op (Attention,
    # LayerNormalization) spread over the models compiled in parallel.
    count = max(1, -(-len(cases) // batch))
    groups = [cases[i::count] for i in range(count)]
    logs = [io.StringIO() for _ in groups]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(
            lambda i: run_group(compiler, groups[i],
                                os.path.join(work, "b%d" % i), logs[i]),
            range(len(groups))))
    with open(os.path.join(work, "log.txt"), "w") as f:
        f.write("".join(l.getvalue() for l in logs))
    for result in results:
        for c, got in result:
            if isinstance(got, str):
                c.status, c.detail = "fail", got
            else:
                check(c, got.get)


def opset_of(model):
    return max((o.version for o in model.opset_import
                if o.domain in ("", "ai.onnx")), default=None)


def same_test(test_dir, other_dir):
    """Whether OTHER_DIR holds TEST_DIR's test at the same opset."""
    path = os.path.join(other_dir, "model.onnx")
    if not os.path.exists(path):
        return False
    return opset_of(onnx.load(path)) == opset_of(
        onnx.load(os.path.join(test_dir, "model.onnx")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--filter", default="")
    ap.add_argument("--dedup-against", default="",
                    help="leave out the tests this node-test directory has "
                    "at the same opset")
    ap.add_argument("--batch", type=int, default=40,
                    help="node tests per compiled model")
    ap.add_argument("--jobs", type=int, default=2,
                    help="models compiled at a time")
    ap.add_argument("--negate", default="",
                    help="negative control: negate the reference gradients "
                    "of the tests this regex matches (they must fail)")
    args = ap.parse_args()
    global NEGATE
    NEGATE = args.negate
    torch.set_num_threads(1)
    supported = set(subprocess.run([args.compiler, "--list-onnx-ops"],
                                   capture_output=True, text=True,
                                   check=True).stdout.split())
    dirs = sorted(d for d in glob.glob(os.path.join(args.data, "test_*"))
                  if not d.endswith("_expanded")
                  and re.search(args.filter, os.path.basename(d)))
    if not dirs:
        sys.exit("error: no node tests under %s" % args.data)
    if args.dedup_against:
        dirs = [d for d in dirs if not same_test(d, os.path.join(
            args.dedup_against, os.path.basename(d)))]
    cases, skipped = [], []
    for d in dirs:
        c = load_case(d, supported)
        if isinstance(c, Case):
            cases.append(c)
        elif c is not None:
            skipped.append(c)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    run_cases(args.compiler, cases, args.work, args.batch, args.jobs)
    rows = [(c.name, c.op, c.status, c.detail) for c in cases]
    rows += [(n, op, "skip", why) for n, op, why in skipped]
    per_op = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    for name, op, status, detail in sorted(rows):
        print("%s %s: %s %s" % (status.upper(), name, op, detail))
        per_op[op][status] += 1
        if status == "skip":
            reasons[detail] += 1
    print("\nper op: passed / failed / skipped tests")
    ops = collections.Counter()
    for op, n in sorted(per_op.items()):
        kind = ("fail" if n["fail"] else "pass" if n["pass"] else "skip")
        ops[kind] += 1
        print("  %-20s %3d %3d %3d  %s" % (op, n["pass"], n["fail"], n["skip"],
                                          kind.upper()))
    tests = collections.Counter(status for _, _, status, _ in rows)
    print("\nskipped tests by reason:")
    for why, n in reasons.most_common():
        print("  %3d  %s" % (n, why))
    print("\nops: %d passed, %d failed, %d skipped"
          % (ops["pass"], ops["fail"], ops["skip"]))
    print("tests: %d passed, %d failed, %d skipped"
          % (tests["pass"], tests["fail"], tests["skip"]))
    if NEGATE:
        negated = [c for c in cases if re.search(NEGATE, c.name)]
        caught = [c for c in negated if c.status == "fail"]
        others = [c for c in cases if c not in negated and c.status == "fail"]
        print("negative control: %d of %d negated tests failed"
              % (len(caught), len(negated)))
        return 0 if negated and len(caught) == len(negated) and not others \
            else 1
    return 1 if tests["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
