#!/usr/bin/python3
"""ONNX node-test conformance runner for the MegaGraph importer.

Walks Debian's libonnx-testdata node tests
(/usr/share/libonnx-testdata/data/node/test_*/model.onnx). Every test whose
ops are all supported by `megagraph-compile --list-onnx-ops` is imported with
`megagraph-compile model.onnx --emit=mlir`; a test passes when the import
succeeds (the tool verifies the module) AND the result types of @main match
the shapes and element types of the test's expected outputs
(test_data_set_*/output_*.pb). Dynamic input dimensions are fixed with
--input-shape from the test's input_*.pb.

Inputs that the importer needs at compile time (shapes, axes, starts,
split sizes, repeats, Range bounds) are graph inputs in many node tests; the
runner turns them into Constant nodes with the test's values (see
SHAPE_OPERANDS), as a PyTorch export would have them.

With --execute, each imported module is also lowered with upstream mlir-opt
(TOSA -> linalg -> LLVM), run with mlir-runner on the test's inputs, and its
values compared with the expected outputs (modules with gt.* ops, which
upstream cannot lower, are only type-checked).

Tests are skipped only for documented reasons (the SKIP_* constants below).
A skipped test is still run, and counts as failed unless the compiler
rejects it with a diagnostic (exit 1, "error:"): a crash, or silently
accepting a variant the importer does not implement, is a failure.

Prints a per-op table and `N passed, M failed, K skipped`; exits 1 if any
test failed. The per-test log goes to --log.
"""

import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

try:
    import numpy
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    sys.exit("error: %s (apt-get install python3-onnx)" % e)

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
MIN_OPSET, MAX_OPSET = 13, 17

# ONNX element type -> MLIR element type the importer produces. uint8 is a
# signless i8 in MLIR (TOSA has no unsigned integer tensors).
SUPPORTED_ELEM = {
    TensorProto.FLOAT: "f32",
    TensorProto.DOUBLE: "f64",
    TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16",
    TensorProto.INT8: "i8",
    TensorProto.UINT8: "i8",
    TensorProto.INT16: "i16",
    TensorProto.INT32: "i32",
    TensorProto.INT64: "i64",
    TensorProto.BOOL: "i1",
}


def elem_name(code):
    try:
        return TensorProto.DataType.Name(code).lower()
    except ValueError:
        return "type%d" % code


# Principled skip reasons (the key is what the log and summary print).
SKIP_OPSET = "model opset outside %d-%d (rejected by design)" % (MIN_OPSET, MAX_OPSET)
SKIP_ELEM = "unsupported element type"  # + ": <type>"
SKIP_SEQUENCE = "sequence/optional/map types are not supported"
SKIP_TRAINING = "training-mode-only variant (inference importer)"


def graph_value_types(graph):
    """(name, TypeProto) for graph inputs/outputs/value_info."""
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        yield vi.name, vi.type


def const_from_inputs(test_dir, model, name):
    """The value of graph input `name` in test_data_set_0, or None."""
    inputs = [i.name for i in model.graph.input]
    if name not in inputs:
        return None
    path = os.path.join(test_dir, "test_data_set_0", "input_%d.pb" % inputs.index(name))
    if not os.path.exists(path):
        return None
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def skip_reason(test_dir, model):
    """A documented reason to skip, or None."""
    opset = None
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            opset = o.version
    if opset is None or not MIN_OPSET <= opset <= MAX_OPSET:
        return SKIP_OPSET + " [opset %s]" % opset
    for _, t in graph_value_types(model.graph):
        which = t.WhichOneof("value")
        if which in ("sequence_type", "optional_type", "map_type"):
            return SKIP_SEQUENCE
        if which == "tensor_type" and t.tensor_type.elem_type not in SUPPORTED_ELEM:
            return SKIP_ELEM + ": " + elem_name(t.tensor_type.elem_type)
    for init in model.graph.initializer:
        if init.data_type not in SUPPORTED_ELEM:
            return SKIP_ELEM + ": " + elem_name(init.data_type)
    for node in model.graph.node:
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "Cast" and attrs["to"].i not in SUPPORTED_ELEM:
            return SKIP_ELEM + ": " + elem_name(attrs["to"].i)
        for a in attrs.values():
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type not in SUPPORTED_ELEM:
                return SKIP_ELEM + ": " + elem_name(a.t.data_type)
        if node.op_type == "BatchNormalization" and attrs.get("training_mode") and attrs["training_mode"].i:
            return SKIP_TRAINING
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            mode = const_from_inputs(test_dir, model, node.input[2])
            if mode is None or bool(mode):
                return SKIP_TRAINING
    return None


# Inputs that the importer needs at compile time (it emits static shapes):
# op type -> input slots that are shapes, axes, starts/ends, split sizes,
# repeats or Range bounds. PyTorch exports feed these from Constant nodes or
# Shape arithmetic; the node tests feed them from graph inputs, so the runner
# turns every graph input those slots depend on into a Constant node holding
# the test's input value (logged per test).
SHAPE_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Slice": (1, 2, 3, 4), "Split": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Range": (0, 1, 2), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,),
    "ReduceMin": (1,), "ReduceProd": (1,), "ReduceSumSquare": (1,),
    "ReduceL2": (1,), "ReduceL1": (1,), "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,),
}
# Ops whose result depends only on the input's type, not its values.
TYPE_ONLY = {"Shape", "Size"}


def compile_time_inputs(model):
    """Graph inputs whose values feed a shape-operand slot."""
    producer = {}
    for node in model.graph.node:
        for out in node.output:
            producer[out] = node
    graph_inputs = {i.name for i in model.graph.input}
    found, seen = [], set()
    work = [node.input[k] for node in model.graph.node
            for k in SHAPE_OPERANDS.get(node.op_type, ())
            if k < len(node.input) and node.input[k]]
    while work:
        name = work.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in graph_inputs:
            found.append(name)
        node = producer.get(name)
        if node is not None and node.op_type not in TYPE_ONLY:
            work.extend(i for i in node.input if i)
    return sorted(found)


def with_constant_inputs(model, values):
    """A copy of `model` where graph inputs `values` (name -> TensorProto)
    are Constant nodes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [i for i in m.graph.input if i.name not in values]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    nodes = [helper.make_node("Constant", [], [name], value=t,
                                   name="test_data_" + name)
             for name, t in values.items()]
    rest = list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes + rest)
    return m


def read_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def mlir_type(dims, code):
    elem = SUPPORTED_ELEM.get(code, elem_name(code))
    return "tensor<" + "".join("%dx" % d for d in dims) + elem + ">"


def result_types(mlir_text):
    """Result types of func.func @main in printed MLIR."""
    for line in mlir_text.splitlines():
        line = line.strip()
        if line.startswith("func.func @main("):
            head = line[: line.rfind("{")] if line.endswith("{") else line
            pos = head.rfind(") -> ")
            if pos < 0:
                return []
            return re.findall(r"tensor<[^>]*>", head[pos + 5:])
    return None


def data_sets(test_dir):
    return sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))


#===----------------------------------------------------------------------===#
# --execute: run the imported module with upstream MLIR and compare values
#===----------------------------------------------------------------------===#

LLVM_BIN = "/usr/lib/llvm-22/bin"
LOWERING = ("builtin.module(transform-interpreter,test-transform-dialect-erase-schedule,"
            "func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),"
            "one-shot-bufferize{bufferize-function-boundaries},convert-linalg-to-loops,"
            "expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
            "reconcile-unrealized-casts)")
# linalg.softmax is decomposed by the transform dialect.
DECOMPOSE_SOFTMAX = """  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %s : (!transform.any_op) -> !transform.any_op
    transform.yield
  }"""


def split_type(t):
    """'tensor<3x4xf32>' -> ([3, 4], 'f32')."""
    parts = t[len("tensor<"):-1].split("x")
    return [int(d) for d in parts[:-1]], parts[-1]


def dense_literal(arr, elem, type_str):
    if elem == "i1":
        def lit(a):
            if a.ndim == 0:
                return "true" if a else "false"
            return "[" + ", ".join(lit(x) for x in a) + "]"
        body = lit(arr)
    else:
        body = '"0x' + numpy.ascontiguousarray(arr).tobytes().hex().upper() + '"'
    return "arith.constant dense<%s> : %s" % (body, type_str)


def execute(mlir_text, inputs, tmp_prefix):
    """Runs @main on `inputs` (numpy arrays); returns (list of flat float64
    arrays or None for empty results, error)."""
    lines = mlir_text.strip().splitlines()
    if not lines or not lines[0].startswith("module"):
        return None, "unexpected module text"
    body = "\n".join(lines[1:-1])
    m = re.search(r"func\.func @main\((.*)\) -> \((.*)\) \{", mlir_text)
    if m:
        arg_types = re.findall(r"tensor<[^>]*>", m.group(1))
        res_types = re.findall(r"tensor<[^>]*>", m.group(2))
    else:
        m = re.search(r"func\.func @main\((.*)\) -> (tensor<[^>]*>)", mlir_text)
        arg_types = re.findall(r"tensor<[^>]*>", m.group(1))
        res_types = [m.group(2)]
    if len(arg_types) != len(inputs):
        return None, "@main takes %d arguments, the test has %d inputs" % (len(arg_types), len(inputs))
    e = ["func.func private @printMemrefF64(memref<*xf64>)",
         "func.func private @printMemrefI64(memref<*xi64>)",
         "func.func @entry() {"]
    args = []
    for i, (a, t) in enumerate(zip(inputs, arg_types)):
        e.append("  %%in%d = %s" % (i, dense_literal(a, split_type(t)[1], t)))
        args.append("%%in%d" % i)
    e.append("  %%r:%d = call @main(%s) : (%s) -> (%s)" % (
        len(res_types), ", ".join(args), ", ".join(arg_types), ", ".join(res_types)))
    printed = []
    for j, t in enumerate(res_types):
        shape, elem = split_type(t)
        if 0 in shape:
            continue
        printed.append(j)
        tgt = "f64" if elem.startswith(("f", "bf")) else "i64"
        shp = "".join("%dx" % d for d in shape)
        src = "%%r#%d" % j
        if elem != tgt:
            e.append("  %%c%d = tosa.cast %s : (%s) -> tensor<%s%s>" % (j, src, t, shp, tgt))
            src = "%%c%d" % j
        e.append("  %%m%d = bufferization.to_buffer %s : tensor<%s%s> to memref<%s%s>" % (j, src, shp, tgt, shp, tgt))
        e.append("  %%u%d = memref.cast %%m%d : memref<%s%s> to memref<*x%s>" % (j, j, shp, tgt, tgt))
        e.append("  call @printMemref%s(%%u%d) : (memref<*x%s>) -> ()" % (tgt.upper(), j, tgt))
    e.append("  return\n}")
    module = ("module attributes {transform.with_named_sequence} {\n" + body + "\n"
              + "\n".join(e) + "\n" + DECOMPOSE_SOFTMAX + "\n}\n")
    with open(tmp_prefix + ".exec.mlir", "w") as f:
        f.write(module)
    p = subprocess.run([os.path.join(LLVM_BIN, "mlir-opt"), "--pass-pipeline=" + LOWERING],
                       input=module, capture_output=True, text=True, timeout=120)
    if p.returncode:
        return None, "lowering with mlir-opt failed: " + p.stderr[-1500:]
    libs = ",".join(os.path.join(LLVM_BIN, "..", "lib", l)
                    for l in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    r = subprocess.run([os.path.join(LLVM_BIN, "mlir-runner"), "-e", "entry",
                        "-entry-point-result=void", "-shared-libs=" + libs],
                       input=p.stdout, capture_output=True, text=True, timeout=120)
    if r.returncode:
        return None, "mlir-runner failed: " + r.stderr[-1500:]
    chunks = r.stdout.split("Unranked Memref")[1:]
    if len(chunks) != len(printed):
        return None, "expected %d printed results, got %d" % (len(printed), len(chunks))
    results = [None] * len(res_types)
    for j, chunk in zip(printed, chunks):
        data = chunk.split("data =", 1)[1]
        nums = re.findall(r"-?nan|-?inf|[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?", data)
        results[j] = numpy.array([float(x) for x in nums], dtype=numpy.float64)
    return results, None


def compare(got, expected_tensor, declared):
    """None if `got` (flat float64) matches the reference TensorProto."""
    ref = numpy_helper.to_array(expected_tensor)
    if declared == TensorProto.BFLOAT16 and ref.dtype == numpy.uint16:
        # bfloat16 references are stored as their uint16 bit patterns.
        ref = (ref.astype(numpy.uint32) << 16).view(numpy.float32).astype(numpy.float16)
    flat = ref.ravel()
    if got is None:
        return None if flat.size == 0 else "no values printed"
    if got.size != flat.size:
        return "%d values, expected %d" % (got.size, flat.size)
    if flat.dtype.kind == "f":
        tight = flat.dtype == numpy.float64 or flat.dtype == numpy.float32
        rtol, atol = (1e-3, 1e-4) if tight else (1e-2, 1e-2)
        ok = numpy.isclose(got, flat.astype(numpy.float64), rtol=rtol, atol=atol, equal_nan=True)
    else:
        ref64 = flat.astype(numpy.float64)
        if flat.dtype == numpy.uint8:
            got = numpy.mod(got, 256)
        ok = got == ref64
    if ok.all():
        return None
    k = int(numpy.argmin(ok))
    return "%d of %d values differ; first at flat index %d: got %r, expected %r" % (
        int((~ok).sum()), ok.size, k, got[k], flat[k])


def declared_elem(vi):
    t = vi.type
    if t.WhichOneof("value") == "tensor_type" and t.tensor_type.elem_type:
        return t.tensor_type.elem_type
    return None


def run_test(args):
    """Runs one test. Returns (name, ops, status, reason, log_lines)."""
    compiler, test_dir, tmp_dir, do_execute = args
    name = os.path.basename(test_dir)
    log = []
    model_path = os.path.join(test_dir, "model.onnx")
    model = onnx.load(model_path)
    ops = sorted({n.op_type for n in model.graph.node})
    skip = skip_reason(test_dir, model)
    const_names = compile_time_inputs(model) if skip is None else []
    init_names = {i.name for i in model.graph.initializer}
    real_inputs = [(k, i) for k, i in enumerate(model.graph.input)
                   if i.name not in init_names]
    dynamic = set()
    for k, vi in real_inputs:
        tt = vi.type.tensor_type
        if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim):
            dynamic.add(k)

    # One compile per distinct (input shapes, compile-time input values).
    runs = []
    seen = set()
    for ds in data_sets(test_dir) or [None]:
        flags, expected, consts = [], [], {}
        if ds is not None and skip is None:
            for k, vi in real_inputs:
                path = os.path.join(ds, "input_%d.pb" % k)
                if vi.name in const_names:
                    t = read_tensor(path)
                    t.name = vi.name
                    consts[vi.name] = t
                elif k in dynamic:
                    t = read_tensor(path)
                    shape = "x".join(str(d) for d in t.dims) or "scalar"
                    flags.append("--input-shape=%s=%s" % (vi.name, shape))
            for j, vi in enumerate(model.graph.output):
                path = os.path.join(ds, "output_%d.pb" % j)
                if not os.path.exists(path):
                    expected.append(None)
                    continue
                t = read_tensor(path)
                # The model's declared type wins: ONNX stores bfloat16
                # reference outputs as uint16.
                expected.append(mlir_type(t.dims, declared_elem(vi) or t.data_type))
        key = (tuple(flags), tuple(sorted((n, t.SerializeToString()) for n, t in consts.items())))
        if key in seen:
            continue
        seen.add(key)
        path = model_path
        if consts:
            path = os.path.join(tmp_dir, "%s_%d.onnx" % (name, len(runs)))
            onnx.save(with_constant_inputs(model, consts), path)
            log.append("  inputs given as Constant nodes from %s: %s"
                       % (os.path.basename(ds), ", ".join(sorted(consts))))
        runs.append((path, flags, expected, ds, consts))

    status, reason = "pass", ""
    executed = False
    for path, flags, expected, ds, consts in runs:
        cmd = [compiler, path, "--emit=mlir", "-o", "-"] + flags
        log.append("  $ " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            status, reason = "fail", "timeout"
            break
        err = p.stderr.strip()
        if p.returncode not in (0, 1):
            status, reason = "fail", "compiler crashed (exit %d): %s" % (p.returncode, err[-2000:])
            break
        if skip is not None:
            log.append("    (skipped test) exit %d%s" % (p.returncode, ": " + err if err else ""))
            if p.returncode != 1 or "error:" not in err:
                status, reason = "fail", ("the importer accepted a skipped variant (%s) "
                                          "instead of rejecting it with a diagnostic" % skip)
                break
            continue
        if p.returncode != 0:
            status, reason = "fail", err or "exit code %d" % p.returncode
            break
        got = result_types(p.stdout)
        if got is None:
            status, reason = "fail", "no func.func @main in the output"
            break
        if len(got) != len(expected):
            status, reason = "fail", "@main returns %d results, the test expects %d" % (len(got), len(expected))
            break
        bad = ["output #%d is %s, expected %s" % (j, g, e)
               for j, (g, e) in enumerate(zip(got, expected)) if e is not None and g != e]
        if bad:
            status, reason = "fail", "; ".join(bad)
            break
        log.append("    ok: " + ", ".join(got))
        if not do_execute or ds is None:
            continue
        if re.search(r"= (gt|ml_program)\.", p.stdout):
            log.append("    not executed: uses gt./ml_program ops, which upstream mlir-opt cannot lower")
            continue
        inputs = [numpy_helper.to_array(read_tensor(os.path.join(ds, "input_%d.pb" % k)))
                  for k, vi in real_inputs if vi.name not in consts]
        values, err = execute(p.stdout, inputs,
                              os.path.join(tmp_dir, name + "_" + os.path.basename(ds)))
        if err:
            status, reason = "fail", "execution: " + err
            break
        bad = []
        for j, vi in enumerate(model.graph.output):
            ref = os.path.join(ds, "output_%d.pb" % j)
            if os.path.exists(ref):
                msg = compare(values[j], read_tensor(ref), declared_elem(vi))
                if msg:
                    bad.append("output #%d: %s" % (j, msg))
        if bad:
            status, reason = "fail", "wrong values: " + "; ".join(bad)
            break
        executed = True
        log.append("    values match (%s)" % os.path.basename(ds))
    if skip is not None and status == "pass":
        status, reason = "skip", skip
    return name, ops, status, reason, log, executed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True, help="path to megagraph-compile")
    ap.add_argument("--data", default=DEFAULT_DATA, help="node test directory")
    ap.add_argument("--log", help="write the per-test log here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="", help="regex on test names")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    ap.add_argument("--execute", action="store_true",
                    help="also run each imported module (lowered with upstream mlir-opt, "
                         "run with mlir-runner) on the test inputs and compare the values")
    opts = ap.parse_args()

    start = time.time()
    supported = set(subprocess.run([opts.compiler, "--list-onnx-ops"], check=True,
                                   capture_output=True, text=True).stdout.split())
    if not supported:
        print("error: %s --list-onnx-ops printed nothing" % opts.compiler)
        return 2
    if not os.path.isdir(opts.data):
        print("error: no ONNX node tests at %s (apt-get install libonnx-testdata)" % opts.data)
        return 2
    tests = []
    not_applicable = []
    for d in sorted(glob.glob(os.path.join(opts.data, "test_*"))):
        if opts.filter and not re.search(opts.filter, os.path.basename(d)):
            continue
        if not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
        ops = {n.op_type for n in model.graph.node}
        if ops and ops <= supported:
            tests.append(d)
        else:
            not_applicable.append((os.path.basename(d), sorted(ops - supported)))
    if not tests:
        print("error: no test in %s uses only supported ops" % opts.data)
        return 2

    with tempfile.TemporaryDirectory(prefix="onnx-conformance-") as tmp_dir, \
            ProcessPoolExecutor(max_workers=opts.jobs) as pool:
        results = list(pool.map(run_test, [(opts.compiler, d, tmp_dir, opts.execute) for d in tests],
                                chunksize=4))

    per_op = collections.defaultdict(lambda: collections.Counter())
    totals = collections.Counter()
    skip_counts = collections.Counter()
    lines = []
    n_executed = 0
    for name, ops, status, reason, log, executed in results:
        n_executed += executed
        totals[status] += 1
        for op in ops:
            per_op[op][status] += 1
        if status == "skip":
            skip_counts[re.sub(r" \[.*\]$", "", reason)] += 1
        lines.append("%s %s [%s]%s" % (status.upper(), name, ",".join(ops),
                                      (": " + reason) if reason else ""))
        lines.extend(log)

    table = ["%-22s %6s %6s %6s" % ("op", "pass", "fail", "skip")]
    for op in sorted(per_op):
        c = per_op[op]
        table.append("%-22s %6d %6d %6d" % (op, c["pass"], c["fail"], c["skip"]))
    untested = sorted(supported - set(per_op))
    summary = []
    summary.append("skip reasons:")
    for r, n in sorted(skip_counts.items(), key=lambda x: -x[1]):
        summary.append("  %4d  %s" % (n, r))
    if untested:
        summary.append("supported ops with no node test: " + " ".join(untested))
    summary.append("%d tests use unsupported ops (not run)" % len(not_applicable))
    if opts.execute:
        summary.append("%d passing tests also checked by execution" % n_executed)
    summary.append("time: %.1fs" % (time.time() - start))

    print("\n".join(table))
    print("\n".join(summary))
    failures = [l for l in lines if l.startswith("FAIL ")]
    if failures:
        print("failures:")
        for l in failures if opts.verbose else failures[:30]:
            print("  " + l[:600])
        if not opts.verbose and len(failures) > 30:
            print("  ... (%d more; see the log)" % (len(failures) - 30))
    if opts.log:
        with open(opts.log, "w") as f:
            f.write("\n".join(lines) + "\n\n")
            f.write("\n".join(table) + "\n" + "\n".join(summary) + "\n\n")
            f.write("not applicable (unsupported ops):\n")
            for name, missing in not_applicable:
                f.write("  %s: %s\n" % (name, " ".join(missing)))
    print("%d passed, %d failed, %d skipped" % (totals["pass"], totals["fail"], totals["skip"]))
    return 1 if totals["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
