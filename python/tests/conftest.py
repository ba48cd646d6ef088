"""The tests import the package from python/ and find the tools through
$MEGAGRAPH_BUILD (set by the ctest entry), else the repository's build/."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def dp2_program(tmp_path_factory):
    """The small GT compiled for dp=2 (shared by the mpirun tests)."""
    import torch

    import megagraph as mg
    from tiny_gt import TinyGT, example_inputs

    torch.manual_seed(0)
    return mg.compile(TinyGT(), example_inputs(), lr=1e-2, plan="dp=2",
                      workdir=str(tmp_path_factory.mktemp("dp2")))
