"""MegaGraph from Python: compile a Graph Transformer `torch.nn.Module`
into a (parallel) training program, train it, read its weights back.

    import megagraph as mg
    program = mg.compile(model, {"x": x, "spd": spd}, lr=1e-3)
    history = program.fit({"x": x, "spd": spd, "labels": y}, steps=100)
    model.load_state_dict(program.state_dict())

The package drives megagraph-compile and the executables it links; see
docs/python.md.
"""

from ._program import History, Program, Step, compile, parse_plan, plan_ranks
from ._tools import MegaGraphError, find_tool

__all__ = ["compile", "Program", "History", "Step", "MegaGraphError",
           "find_tool", "parse_plan", "plan_ranks"]
