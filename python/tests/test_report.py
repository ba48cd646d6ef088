"""Plan and run reports: program.report() after a dp=2 run under mpirun
(the plan page's SVG: one memory bar per device, one Gantt row per stage;
the run page: measured memory per rank beside the prediction, the loss
curve), and megagraph-report's errors on logs that are not training logs."""

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest

import megagraph as mg

REPORT = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "megagraph-report")
SBM = "synthetic:sbm,nodes=64,classes=3,features=6,seed=3"


class Svg(HTMLParser):
    """The attributes of every element, by class."""

    def __init__(self, path):
        super().__init__()
        self.by_class = {}
        with open(path) as f:
            self.feed(f.read())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for cls in a.get("class", "").split():
            self.by_class.setdefault(cls, []).append(a)


def test_plan_and_run_report(dp2_program, tmp_path):
    if shutil.which("mpirun") is None:
        pytest.fail("mpirun not found (scripts/setup.sh installs Open MPI)")
    program = dp2_program
    # The plan page is there with or without a run (the program is shared
    # with another test, which may have trained it).
    program.report(str(tmp_path / "before"))
    page = Svg(str(tmp_path / "before" / "index.html"))
    assert [b["data-rank"] for b in page.by_class["memory-bar"]] == ["0", "1"]
    assert [r["data-stage"] for r in page.by_class["gantt-row"]] == ["0"]
    assert len(page.by_class["device"]) == 2

    history = program.fit(SBM, steps=4, launcher="mpirun",
                          launcher_args=["--oversubscribe"])
    run_page = program.report(str(tmp_path / "after"))
    assert run_page.endswith("run.html")
    run = Svg(run_page)
    ranks = run.by_class["rank-memory"]
    assert [r["data-rank"] for r in ranks] == ["0", "1"]
    plan = json.load(open(tmp_path / "after" / "plan.json"))
    for r, rank in enumerate(ranks):
        assert int(rank["data-measured"]) == max(s.peak_bytes[r]
                                                 for s in history)
        assert int(rank["data-predicted"]) == plan["prediction"]["peak_bytes"]
    loss = [c for c in run.by_class["curve"] if c["data-label"] == "loss"]
    assert len(loss) == 1 and loss[0]["data-points"] == "4"


@pytest.mark.parametrize("content,message", [
    ("", r"no steps"),
    ("step 1 loss 0.5\n", r"log\.jsonl:1: not JSON"),
    ('{"step": 1, "loss": 0.5}\n[1, 2]\n', r"log\.jsonl:2: not a JSON object"),
    ('{"step": 1}\n', r"log\.jsonl:1: no 'loss'"),
    ('{"step": 1, "loss": "low"}\n', r"'loss' a number"),
    ('{"step": 1, "loss": 1}\n{"step": 1, "loss": 1}\n',
     r"log\.jsonl:2: step 1 after step 1"),
])
def test_report_rejects_invalid_logs(tmp_path, content, message):
    log = tmp_path / "log.jsonl"
    log.write_text(content)
    proc = subprocess.run([sys.executable, REPORT, str(log)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("megagraph-report: error: ")
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "log.html").exists()


def test_report_of_a_log_without_plan(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"step": k, "loss": 1.0 / k,
                                       "accuracy": 0.1 * k,
                                       "step_time_s": 0.01}) + "\n"
                           for k in range(1, 6)))
    proc = subprocess.run([sys.executable, REPORT, str(log)],
                          capture_output=True, text=True, check=True)
    assert "wrote" in proc.stdout
    page = Svg(str(tmp_path / "log.html"))
    labels = sorted(c["data-label"] for c in page.by_class["curve"])
    assert labels == ["loss", "step time", "train accuracy"]


def test_plan_page_in_headless_chromium(tmp_path):
    """The plan page renders in a browser: headless Chromium (Debian's
    `chromium`, installed by scripts/setup.sh; skipped where it is missing)
    takes a screenshot of a pp=2 plan, a PNG of the window's size."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    model = os.path.join(repo, "examples", "models", "plain_gt", "model.onnx")
    subprocess.run([mg.find_tool("megagraph-compile"), model, "--input-shape",
                    "x=8x16x8", "--input-shape", "pe=8x16x4", "--input-shape",
                    "spd=8x16x16", "--train", "--plan", "pp=2,mb=4",
                    "--emit=plan", "-o", str(tmp_path / "plan.json"),
                    "--plan-report", str(tmp_path / "report")],
                   check=True, capture_output=True)
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--window-size=1150,1200", f"--screenshot={shot}",
                    (tmp_path / "report" / "index.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = (int.from_bytes(data[16:20], "big"),
                     int.from_bytes(data[20:24], "big"))
    assert (width, height) == (1150, 1200)
    assert len(data) > 20000  # drawn, not a blank page
