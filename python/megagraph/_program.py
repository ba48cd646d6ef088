"""`compile` and the `Program` it returns."""

import collections
import copy
import json
import os
import re
import subprocess
import tempfile
import time

import numpy as np

from . import _data, _export
from ._tools import MegaGraphError, diagnostic_of, find_tool, run_tool


def parse_plan(plan):
    """The keys of a plan string such as "dp=2,pp=2,mb=4" as a dict of
    strings; dp, pp, cp and mb default to 1."""
    keys = {"dp": "1", "pp": "1", "cp": "1", "mb": "1"}
    for part in filter(None, (p.strip() for p in plan.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise MegaGraphError(f"plan '{plan}': '{part}' is not KEY=VALUE")
        keys[key.strip()] = value.strip()
    return keys


def plan_ranks(plan):
    """The number of processes a plan runs on: dp * pp * cp."""
    keys = parse_plan(plan)
    try:
        return int(keys["dp"]) * int(keys["pp"]) * int(keys["cp"])
    except ValueError:
        raise MegaGraphError(f"plan '{plan}': dp, pp and cp must be integers")


def _flag_args(flags):
    """compile_flags as command-line flags: clip_grad_norm=1.0 becomes
    --clip-grad-norm 1.0, True a bare flag, False/None nothing, a list one
    flag per element."""
    args = []
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def _shape_arg(name, shape):
    return f"{name}=" + "x".join(str(d) for d in shape)


class Step(dict):
    """One training step's metrics (the executable's JSON log line): step,
    loss, accuracy, test_accuracy, step_time_s, ... as keys and
    attributes."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class History(list):
    """The steps of a run, in order."""

    @property
    def loss(self):
        return [s["loss"] for s in self]

    @property
    def accuracy(self):
        return [s.get("accuracy") for s in self]


class Program:
    """A compiled model: the training (or inference) executable, the plan it
    was compiled for and the ONNX export it came from."""

    def __init__(self, module, inputs, output_names, options, workdir,
                 build_dir):
        self.module = module
        self.inputs = inputs  # [(name, example array)]
        self.output_names = list(output_names)
        self.options = options
        self.workdir = workdir
        self.build_dir = build_dir
        self.compiler = find_tool("megagraph-compile", build_dir)
        self.onnx_path = os.path.join(workdir, "model.onnx")
        self.exporter = _export.export(module, inputs, output_names,
                                       self.onnx_path, options["exporter"])
        self.initial_state = {k: v.detach().clone()
                              for k, v in module.state_dict().items()}
        self.executable = os.path.join(workdir, "model.bin")
        self.plan = options["plan"] or "dp=1"
        self.compile_log = ""
        self._trained = None  # name -> array after fit with --export-npy
        self._infer_cache = {}
        self._runs = 0
        self._last_log = None
        self._compile()

    # -- compiling ---------------------------------------------------------

    def _base_args(self):
        o = self.options
        args = [self.compiler, self.onnx_path, "--target", o["target"]]
        if o["train"]:
            args += ["--train", "--loss", o["loss"], "--optimizer",
                     o["optimizer"], "--lr", repr(float(o["lr"]))]
        args += _flag_args(o["compile_flags"])
        return args

    def _plan_args(self):
        """--plan / --devices and the input shapes of the search or of one
        rank (a given plan compiles each rank's batch: the global batch
        over dp, and over the micro-batches with pp > 1)."""
        o = self.options
        shapes = [list(a.shape) for _, a in self.inputs]
        if o["plan"]:
            keys = parse_plan(o["plan"])
            div = int(keys["dp"]) * (int(keys["mb"]) if int(keys["pp"]) > 1
                                     else 1)
            batch = shapes[0][0] if shapes and shapes[0] else 1
            if batch % div:
                raise MegaGraphError(
                    f"plan {o['plan']}: the example batch {batch} is not "
                    f"divisible by {div} (dp times the micro-batches)")
            for s in shapes:
                if s:
                    s[0] //= div
            args = ["--plan", o["plan"]]
        elif o["devices"] > 1:
            args = ["--devices", str(o["devices"]), "--device-memory",
                    str(o["device_memory"]), "--explain"]
        else:
            args = []
        for (name, _), s in zip(self.inputs, shapes):
            args += ["--input-shape", _shape_arg(name, s)]
        return args

    def _compile(self):
        cmd = self._base_args() + self._plan_args() + [
            "--emit=exe", "-o", self.executable]
        _, err = run_tool(cmd)
        self.compile_log = err
        chosen = re.search(r"chosen plan (\S+) for", err)
        if chosen:
            self.plan = chosen.group(1)
        self.ranks = plan_ranks(self.plan) if self.options["train"] else 1

    def report(self, folder=None):
        """Writes the plan report (megagraph-compile --plan-report: device
        grid, memory per device, pipeline schedule, ranked alternatives)
        into `folder` (default: the work folder's report/), and after fit
        the run's page (megagraph-report: measured beside predicted, the
        curves) as run.html there. Returns the path of the page to open:
        run.html after fit, else index.html."""
        if not self.options["train"]:
            raise MegaGraphError("report: plans apply to training programs "
                                 "(train=True)")
        folder = os.path.abspath(folder or os.path.join(self.workdir,
                                                        "report"))
        cmd = self._base_args() + self._plan_args() + [
            "--emit=plan", "-o", os.path.join(self.workdir, "plan.json"),
            "--plan-report", folder]
        run_tool(cmd)
        page = os.path.join(folder, "index.html")
        if self._last_log:
            from . import report
            try:
                page = report.write_report(
                    self._last_log, os.path.join(folder, "plan.json"),
                    os.path.join(folder, "run.html"))
            except report.ReportError as e:
                raise MegaGraphError(f"megagraph-report: error: {e}") from None
        return page

    # -- training ----------------------------------------------------------

    def _launch(self, cmd, launcher, launcher_args):
        if launcher is None:
            if self.ranks != 1:
                raise MegaGraphError(
                    f"plan {self.plan} runs on {self.ranks} processes: pass "
                    "launcher='mpirun' or 'srun'")
            return list(cmd)
        if launcher == "mpirun":
            prefix = [find_tool("mpirun"), "-np", str(self.ranks)]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                prefix.append("--allow-run-as-root")
            if self.ranks > (os.cpu_count() or 1):
                prefix.append("--oversubscribe")
        elif launcher == "srun":
            prefix = [find_tool("srun"), "-n", str(self.ranks)]
        else:
            raise MegaGraphError(
                f"launcher must be 'mpirun', 'srun' or None, got '{launcher}'")
        return prefix + list(launcher_args) + list(cmd)

    def _supports(self, flag):
        if not hasattr(self, "_help"):
            proc = subprocess.run([self.executable, "--help"],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            self._help = proc.stdout
        return flag in self._help

    def fit(self, data, steps, *, launcher=None, on_step=None, seed=None,
            log_json=None, launcher_args=(), args=(), verbose=False):
        """Trains `steps` steps on `data` (a --data spec string, a dict of
        arrays or an iterable of dicts; see _data.py) and returns the
        History. `on_step(step)` is called with each step's metrics as the
        run goes. The trained weights stay with the program (state_dict,
        predict). `args` are more executable flags; `verbose` prints the
        executable's own lines."""
        if not self.options["train"]:
            raise MegaGraphError("fit: the program was compiled with "
                                 "train=False")
        self._runs += 1
        run_dir = os.path.join(self.workdir, f"run{self._runs}")
        os.makedirs(run_dir, exist_ok=True)
        spec = _data.data_spec(data, os.path.join(run_dir, "data"))
        log = log_json or os.path.join(run_dir, "log.jsonl")
        if os.path.exists(log):
            os.remove(log)
        cmd = [self.executable, "--mode", "train", "--data", spec,
               "--steps", str(int(steps)), "--log-json", log]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        weights = os.path.join(run_dir, "weights")
        # The driver exports the parameters of every plan (pp included).
        export_weights = self._supports("--export-npy")
        self._no_weights = (
            "" if export_weights else
            "the executable has no --export-npy (rebuild the runtime)")
        if export_weights:
            cmd += ["--export-npy", weights]
        cmd += list(args)
        cmd = self._launch(cmd, launcher, launcher_args)
        history = History()
        out_path = os.path.join(run_dir, "output.txt")
        with open(out_path, "w+") as out:
            proc = subprocess.Popen(cmd, stdout=None if verbose else out,
                                    stderr=subprocess.STDOUT if not verbose
                                    else None, text=True)
            offset = 0
            pending = ""

            def drain():
                nonlocal offset, pending
                if not os.path.exists(log):
                    return
                with open(log) as f:
                    f.seek(offset)
                    chunk = f.read()
                    offset = f.tell()
                pending += chunk
                *lines, pending = pending.split("\n")
                for line in lines:
                    if line.strip():
                        step = Step(json.loads(line))
                        history.append(step)
                        if on_step:
                            on_step(step)

            try:
                while proc.poll() is None:
                    drain()
                    time.sleep(0.05)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            drain()
            out.seek(0)
            output = out.read()
        if proc.returncode != 0:
            raise MegaGraphError(
                diagnostic_of(output, f"{os.path.basename(self.executable)} "
                              f"exited with status {proc.returncode}"),
                proc.returncode, output, cmd)
        if export_weights:
            self._trained = self._load_weights(weights)
        self.output = output
        self._last_log = log
        return history

    # -- weights -----------------------------------------------------------

    def _load_weights(self, folder):
        """name -> array of the parameters --export-npy wrote."""
        weights = {}
        for name in sorted(os.listdir(folder)):
            if name.endswith(".npy"):
                weights[name[:-4]] = np.load(os.path.join(folder, name))
        return weights

    def state_dict(self):
        """The module's state_dict with the trained parameters: each
        parameter under its own name (the exporter keeps parameter names as
        ONNX initializer names, which --export-npy writes), buffers and
        untrained entries as they were at compile time."""
        import torch

        state = collections.OrderedDict(
            (k, v.clone()) for k, v in self.initial_state.items())
        if self._trained is None:
            if self._runs:
                raise MegaGraphError("state_dict: " + self._no_weights)
            return state
        params = dict(self.module.named_parameters())
        # The driver writes '/' in a name as '_' (Inputs.cpp, fileNameOf).
        trained = {n: self._trained.get(n.replace("/", "_")) for n in params}
        missing = [n for n, v in trained.items() if v is None]
        if missing:
            raise MegaGraphError(
                "state_dict: the trained program has no weights for "
                + ", ".join(missing) + " (exported under other names: "
                + ", ".join(sorted(set(self._trained) - set(params))) + ")")
        for name in params:
            value = trained[name]
            if tuple(value.shape) != tuple(state[name].shape):
                raise MegaGraphError(
                    f"state_dict: trained '{name}' has shape "
                    f"{list(value.shape)}, the module's is "
                    f"{list(state[name].shape)}")
            state[name] = torch.from_numpy(value.copy()).to(state[name].dtype)
        return state

    # -- inference ---------------------------------------------------------

    def predict(self, inputs):
        """Runs the model's forward (--mode infer) with the current weights
        (the trained ones after fit) on `inputs` (as compile's
        example_inputs); returns the output array, or a dict of them when
        the model has several outputs."""
        named = _export.named_inputs(self.module, inputs)
        key = (self._runs, tuple((n, tuple(a.shape)) for n, a in named))
        exe = self._infer_cache.get(key)
        if exe is None and not self.options["train"] and all(
                tuple(a.shape) == tuple(e.shape)
                for (_, a), (_, e) in zip(named, self.inputs)):
            exe = self.executable  # the forward, as compiled
        if exe is None:
            exe = self._compile_inference(named, len(self._infer_cache) + 1)
            self._infer_cache[key] = exe
        folder = exe + ".io"
        os.makedirs(folder, exist_ok=True)
        cmd = [exe, "--mode", "infer", "--output-dir", folder, "--quiet"]
        for name, value in named:
            path = os.path.join(folder, "in." + name + ".npy")
            np.save(path, np.ascontiguousarray(value))
            cmd += ["--input", f"{name}={path}"]
        run_tool(cmd)
        outs = {n: np.load(os.path.join(folder, n + ".npy"))
                for n in self.output_names}
        return outs[self.output_names[0]] if len(outs) == 1 else outs

    def _compile_inference(self, named, index):
        """An inference executable of the module with the current weights
        (re-exported: tied initializers of the first export may have been
        trained apart)."""
        module = copy.deepcopy(self.module)
        module.load_state_dict(self.state_dict())
        path = os.path.join(self.workdir, f"infer{index}.onnx")
        _export.export(module, named, self.output_names, path,
                       self.options["exporter"])
        exe = os.path.join(self.workdir, f"infer{index}.bin")
        cmd = [self.compiler, path, "--target", self.options["target"],
               "--emit=exe", "-o", exe]
        for name, a in named:
            cmd += ["--input-shape", _shape_arg(name, a.shape)]
        run_tool(cmd)
        return exe

    def __repr__(self):
        return (f"<megagraph.Program plan={self.plan} ranks={self.ranks} "
                f"executable={self.executable}>")


def compile(module, example_inputs, *, train=True, loss="cross_entropy",
            optimizer="adamw", lr=1e-3, devices=1, device_memory="16GiB",
            plan=None, target="cpu", output_names=("pred",),
            exporter="auto", build_dir=None, workdir=None, **compile_flags):
    """Exports `module` on `example_inputs` (dict name -> tensor in
    forward's order, or a tuple named after forward's parameters; axis 0 is
    the global batch), compiles it with megagraph-compile and returns a
    Program. `plan` ("dp=2", ...) is used as given; without it, devices > 1
    lets the plan search choose under `device_memory` per device. Other
    keyword arguments become megagraph-compile flags (weight_decay=0.01 is
    --weight-decay 0.01). The tools are found in `build_dir`,
    $MEGAGRAPH_BUILD, PATH or the repository's build/."""
    if devices < 1:
        raise MegaGraphError(f"devices must be at least 1, got {devices}")
    inputs = _export.named_inputs(module, example_inputs)
    workdir = workdir or tempfile.mkdtemp(prefix="megagraph-")
    os.makedirs(workdir, exist_ok=True)
    options = dict(train=train, loss=loss, optimizer=optimizer, lr=lr,
                   devices=devices, device_memory=device_memory, plan=plan,
                   target=target, exporter=exporter,
                   compile_flags=compile_flags)
    return Program(module, inputs, output_names, options, workdir, build_dir)
