"""Exporting a `torch.nn.Module` to ONNX the way megagraph-compile wants it.

Two exporters:
  * "legacy": TorchScript `torch.onnx.export` (torch 1.x and 2.x), opset 17,
    no constant folding, so every parameter stays an initializer under its
    `named_parameters()` name (folding would turn a transposed Linear
    weight into an exporter-named `onnx::` initializer);
  * "dynamo": torch 2.x `torch.onnx.export(..., dynamo=True)`, whose
    initializers are named after the parameters' qualified names.
"auto" takes dynamo when torch is 2.x and onnxscript is installed and its
export keeps every parameter as an initializer of its own name (dynamo
folds a Linear weight's transpose into a new `val_N` initializer and
merges parameters of equal value, so trained weights could not be read
back under the module's names); otherwise, or when that export fails, it
takes legacy. Axis 0 of every input and
output is exported as the symbolic "batch" axis, so the compiler can
re-batch the model for data and pipeline parallelism (--input-shape).
"""

import importlib.util
import inspect
import warnings

import numpy as np

from ._tools import MegaGraphError


def named_inputs(module, example_inputs):
    """[(name, numpy array)] in forward's argument order. `example_inputs`
    is a dict (name -> tensor or array, in argument order), a tuple or list
    (named after forward's parameters) or a single tensor."""
    if isinstance(example_inputs, dict):
        items = list(example_inputs.items())
    else:
        if not isinstance(example_inputs, (tuple, list)):
            example_inputs = (example_inputs,)
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < len(example_inputs):
            raise MegaGraphError(
                f"{len(example_inputs)} example inputs for a forward taking "
                f"{len(params)} positional arguments")
        items = list(zip([p.name for p in params], example_inputs))
    return [(name, to_numpy(value)) for name, value in items]


def to_numpy(value):
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _torch_major():
    import torch
    return int(torch.__version__.split(".")[0])


def choose_exporter(exporter):
    if exporter not in ("auto", "legacy", "dynamo"):
        raise MegaGraphError(
            f"exporter must be auto, legacy or dynamo, got '{exporter}'")
    if exporter != "auto":
        return exporter
    if _torch_major() >= 2 and importlib.util.find_spec("onnxscript"):
        return "dynamo"
    return "legacy"


def _unnamed_parameters(module, path):
    """The module's parameters that are not initializers of the ONNX file
    `path` under their own names."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    names = {i.name for i in model.graph.initializer}
    return [n for n, _ in module.named_parameters() if n not in names]


def export(module, inputs, output_names, path, exporter="auto"):
    """Writes `module` applied to `inputs` ([(name, array)]) to ONNX file
    `path`; returns the exporter used."""
    import torch

    chosen = choose_exporter(exporter)
    names = [n for n, _ in inputs]
    args = tuple(torch.from_numpy(np.ascontiguousarray(a)) for _, a in inputs)
    axes = {n: {0: "batch"} for n in list(names) + list(output_names)}
    was_training = module.training
    module.eval()
    try:
        # Shape arithmetic on traced sizes is what the importer folds.
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        if chosen == "dynamo":
            try:
                with torch.no_grad():
                    torch.onnx.export(module, args, path, dynamo=True,
                                      input_names=names,
                                      output_names=list(output_names),
                                      dynamic_axes=axes, external_data=False)
                lost = _unnamed_parameters(module, path)
                if exporter == "dynamo" or not lost:
                    return "dynamo"
                warnings.warn("megagraph: the dynamo export renames "
                              f"{', '.join(lost[:4])}"
                              f"{', ...' if len(lost) > 4 else ''}; "
                              "using the TorchScript exporter")
            except Exception as e:  # the exporter's failures vary by version
                if exporter == "dynamo":
                    raise MegaGraphError(f"dynamo export failed: {e}") from e
                warnings.warn(f"megagraph: dynamo export failed ({e}); "
                              "using the TorchScript exporter")
        with torch.no_grad():
            kwargs = {}
            if _torch_major() >= 2:
                kwargs["dynamo"] = False
            torch.onnx.export(module, args, path, input_names=names,
                              output_names=list(output_names),
                              dynamic_axes=axes, opset_version=17,
                              do_constant_folding=False, export_params=True,
                              training=torch.onnx.TrainingMode.EVAL, **kwargs)
        return "legacy"
    finally:
        module.train(was_training)
