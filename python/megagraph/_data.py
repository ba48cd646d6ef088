"""Training data for a compiled program: the `--data` spec it is given.

A string is passed through (`synthetic:sbm,...`, `ogb:DIR`, `npy:DIR`, a
dataset directory). A dict of arrays is one step's tensors, written as
DIR/<name>.npy; an iterable of dicts is one step each, written as
DIR/step<k>/<name>.npy (k from 1), which the executable uses in order and
cycles (runtime/driver/NpyBatches.cpp). Each dict holds one array per
model input plus `labels` and optionally `label_mask`.
"""

import os

import numpy as np

from ._export import to_numpy
from ._tools import MegaGraphError


def _write_step(folder, tensors):
    if not isinstance(tensors, dict):
        raise MegaGraphError(
            "data: each step must be a dict of arrays (input name -> array), "
            f"got {type(tensors).__name__}")
    if "labels" not in tensors:
        raise MegaGraphError("data: a step has no 'labels' array")
    os.makedirs(folder, exist_ok=True)
    for name, value in tensors.items():
        np.save(os.path.join(folder, name + ".npy"),
                np.ascontiguousarray(to_numpy(value)))


def data_spec(data, folder):
    """The --data argument for `data`, writing arrays under `folder`."""
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    if isinstance(data, dict):
        _write_step(folder, data)
        return "npy:" + folder
    try:
        steps = iter(data)
    except TypeError:
        raise MegaGraphError(
            "data must be a dataset spec string, a dict of arrays or an "
            f"iterable of dicts, got {type(data).__name__}") from None
    count = 0
    for count, tensors in enumerate(steps, start=1):
        _write_step(os.path.join(folder, f"step{count}"), tensors)
    if count == 0:
        raise MegaGraphError("data: the iterable gave no steps")
    return "npy:" + folder
