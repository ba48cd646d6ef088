"""The Python front door end to end: a small GT module compiled with
mg.compile, trained with fit on one process (npy tensors) and under mpirun
with dp=2 (synthetic SBM), each against the command-line run of the same
executable; predict against the module's forward; state_dict loaded back
into the module (also under pp=2); tool errors as MegaGraphError."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch

import megagraph as mg
from tiny_gt import TinyGT, example_inputs, labels

STEPS = 6
SBM = "synthetic:sbm,nodes=64,classes=3,features=6,seed=3"


def module(seed=0):
    torch.manual_seed(seed)
    return TinyGT()


def forward(m, inputs):
    with torch.no_grad():
        return m(**inputs).numpy()


def cli_losses(command, log):
    if os.path.exists(log):
        os.remove(log)
    subprocess.run(command + ["--log-json", log], check=True,
                   stdout=subprocess.DEVNULL)
    with open(log) as f:
        return [json.loads(line)["loss"] for line in f]


def mpirun(ranks):
    cmd = [shutil.which("mpirun"), "-np", str(ranks), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A program trained STEPS AdamW steps on two batches of tensors."""
    m = module()
    inputs = example_inputs()
    program = mg.compile(m, inputs, lr=1e-2, weight_decay=0.01,
                         workdir=str(tmp_path_factory.mktemp("one")))
    data = [{**example_inputs(k), "labels": labels(k)} for k in range(2)]
    seen = []
    history = program.fit(data, steps=STEPS, on_step=seen.append)
    return m, program, history, seen


def test_fit_streams_steps_and_matches_cli(trained, tmp_path):
    _, program, history, seen = trained
    assert program.plan == "dp=1" and program.ranks == 1
    assert [s.step for s in seen] == list(range(1, STEPS + 1))
    assert seen == list(history)
    assert all(isinstance(s, mg.Step) for s in history)
    assert history.loss[-1] < history.loss[0]
    # The same executable from the command line, on the tensors fit wrote.
    data = os.path.join(program.workdir, "run1", "data")
    assert sorted(os.listdir(data)) == ["step1", "step2"]
    cli = cli_losses([program.executable, "--mode", "train", "--data",
                      "npy:" + data, "--steps", str(STEPS)],
                     str(tmp_path / "cli.jsonl"))
    assert cli == history.loss


def test_state_dict_round_trip_and_predict(trained):
    m, program, _, _ = trained
    if not program._supports("--export-npy"):
        pytest.fail("the executable has no --export-npy")
    state = program.state_dict()
    assert list(state) == list(m.state_dict())
    changed = [k for k in state if not torch.equal(state[k], m.state_dict()[k])]
    assert len(changed) == len(list(m.parameters()))
    # norm1 and norm2 start equal (ones and zeros), so the exporter ties
    # them; trained apart, each comes back under its own name.
    assert not torch.equal(state["norm1.weight"], state["norm2.weight"])
    loaded = module(seed=1)
    loaded.load_state_dict(state)
    inputs = example_inputs(5)
    want = forward(loaded, inputs)
    got = program.predict(inputs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.abs(got - forward(m, inputs)).max() > 1e-3  # trained weights


def test_predict_matches_forward_before_training(tmp_path):
    m = module(seed=2)
    inputs = example_inputs(1)
    program = mg.compile(m, inputs, train=False, workdir=str(tmp_path))
    got = program.predict(inputs)
    np.testing.assert_allclose(got, forward(m, inputs), rtol=1e-4, atol=1e-4)
    with pytest.raises(mg.MegaGraphError, match="train=False"):
        program.fit(SBM, steps=1)


def test_fit_dp2_under_mpirun_matches_cli(dp2_program, tmp_path):
    if shutil.which("mpirun") is None:
        pytest.fail("mpirun not found (scripts/setup.sh installs Open MPI)")
    program = dp2_program
    assert program.ranks == 2
    with pytest.raises(mg.MegaGraphError, match="launcher='mpirun'"):
        program.fit(SBM, steps=1)
    history = program.fit(SBM, steps=STEPS, launcher="mpirun",
                          launcher_args=["--oversubscribe"])
    assert len(history) == STEPS
    assert all(len(s.peak_bytes) == 2 for s in history)
    cli = cli_losses(mpirun(2) + [program.executable, "--mode", "train",
                                  "--data", SBM, "--steps", str(STEPS)],
                     str(tmp_path / "cli.jsonl"))
    assert cli == history.loss


def test_tool_errors_are_exceptions(trained, tmp_path):
    _, program, _, _ = trained
    inputs = example_inputs()
    # The executable's diagnostic: a missing input file.
    with pytest.raises(mg.MegaGraphError) as e:
        program.fit({"x": inputs["x"], "labels": labels()}, steps=1)
    assert e.value.diagnostic.startswith("error: --data npy: missing file")
    assert "for input 'spd' (expected i64 [2, 8, 8])" in str(e.value)
    assert e.value.returncode == 1
    # megagraph-compile's diagnostic: a flag out of range.
    with pytest.raises(mg.MegaGraphError,
                       match=r"^megagraph-compile: error: --lr"):
        mg.compile(module(), inputs, lr=-1.0, workdir=str(tmp_path / "lr"))
    # Checked before compiling: the batch does not split over dp.
    with pytest.raises(mg.MegaGraphError, match="not divisible by 4"):
        mg.compile(module(), inputs, plan="dp=4", workdir=str(tmp_path / "p"))
    with pytest.raises(mg.MegaGraphError, match="'labels'"):
        program.fit(inputs, steps=1)


def test_searched_plan_trains_on_its_rank_count(tmp_path):
    """devices=2 without a plan: the search's choice is the program's plan,
    and fit launches that many ranks."""
    if shutil.which("mpirun") is None:
        pytest.fail("mpirun not found (scripts/setup.sh installs Open MPI)")
    program = mg.compile(module(), example_inputs(), devices=2,
                         device_memory="1GiB", workdir=str(tmp_path))
    assert "chosen plan " + program.plan in program.compile_log
    assert program.ranks == mg.plan_ranks(program.plan) == 2
    history = program.fit(SBM, steps=3, launcher="mpirun",
                          launcher_args=["--oversubscribe"])
    assert [s.step for s in history] == [1, 2, 3]
    assert all(len(s.peak_bytes) == 2 for s in history)


def test_pp2_state_dict_has_every_stage_trained(tmp_path):
    """Under pp each stage updates its own parameters; the driver's export
    gathers them, so state_dict has all of them trained."""
    if shutil.which("mpirun") is None:
        pytest.fail("mpirun not found (scripts/setup.sh installs Open MPI)")
    m = module()
    # Distinct 1-D initializers: the exporter would merge equal ones (the
    # all-ones LayerNorm weights), tying parameters across the stages.
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() == 1:
                p.add_(0.01 * torch.randn_like(p))
    initial = {k: v.clone() for k, v in m.state_dict().items()}
    program = mg.compile(m, example_inputs(), lr=1e-2, plan="pp=2,mb=2",
                         workdir=str(tmp_path / "pp"))
    program.fit(SBM, steps=3, launcher="mpirun",
                launcher_args=["--oversubscribe"])
    state = program.state_dict()
    params = dict(m.named_parameters())
    assert all(not torch.equal(state[k], initial[k]) for k in params)
    m.load_state_dict(state)
