"""Finding and running MegaGraph's command-line tools.

The package drives the tools as subprocesses: `megagraph-compile` and the
executables it links. Every failure of a tool becomes a `MegaGraphError`
that carries the tool's one-line diagnostic.
"""

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class MegaGraphError(RuntimeError):
    """A tool failed. `diagnostic` is its one-line error message,
    `returncode` its exit status and `output` everything it printed."""

    def __init__(self, diagnostic, returncode=None, output="", command=None):
        super().__init__(diagnostic)
        self.diagnostic = diagnostic
        self.returncode = returncode
        self.output = output
        self.command = command


MegaGraphError.__module__ = "megagraph"


def diagnostic_of(text, fallback):
    """The line a tool reports its error on: the last one containing
    'error:' (tools print `...: error: ...` and exit non-zero), else the
    last non-empty line, else `fallback`."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if "error:" in line:
            return line
    return lines[-1] if lines else fallback


def find_tool(name, build_dir=None):
    """Path of tool `name`: in `build_dir`/bin, in $MEGAGRAPH_BUILD/bin, on
    PATH, or in the repository's build/bin, in that order."""
    candidates = []
    for root in (build_dir, os.environ.get("MEGAGRAPH_BUILD")):
        if root:
            candidates += [os.path.join(root, "bin", name),
                           os.path.join(root, name)]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    found = shutil.which(name)
    if found:
        return found
    path = os.path.join(REPO, "build", "bin", name)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    raise MegaGraphError(
        f"{name}: not found (pass build_dir=, set MEGAGRAPH_BUILD to the "
        "build directory, or put its bin/ on PATH)")


def run_tool(command, env=None, cwd=None):
    """Runs `command`; returns (stdout, stderr). Raises MegaGraphError with
    the tool's diagnostic when it exits non-zero."""
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    if proc.returncode != 0:
        output = proc.stdout + proc.stderr
        raise MegaGraphError(
            diagnostic_of(proc.stderr or proc.stdout,
                          f"{os.path.basename(command[0])} exited with "
                          f"status {proc.returncode}"),
            proc.returncode, output, command)
    return proc.stdout, proc.stderr
