"""megagraph-report: what a training run measured, beside what the plan
predicted, as a self-contained HTML page (inline SVG, no script).

    megagraph-report LOG.jsonl [--plan DIR/plan.json] [-o OUT.html]

LOG.jsonl is the executable's --log-json (one JSON object per step: step,
loss, accuracy, test_accuracy, step_time_s and, on graph data sets,
peak_bytes per rank). --plan is the plan step's JSON (megagraph-compile
--plan-report DIR writes DIR/plan.json; --emit=plan prints the same). The
page shows per rank the measured peak memory beside the predicted one, the
measured step time (median after the first step) beside the predicted one,
and the loss and accuracy curves. A log that is not one JSON object per
line with a step and a finite-or-null loss is an error naming the file and
line.
"""

import argparse
import html
import json
import math
import os
import statistics
import sys


class ReportError(Exception):
    pass


def read_log(path):
    """The steps of a --log-json file, checked."""
    try:
        f = open(path)
    except OSError as e:
        raise ReportError(f"'{path}': cannot open: {e.strerror}") from None
    steps = []
    with f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                step = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReportError(f"{path}:{number}: not JSON ({e.msg}); "
                                  "expected one object per line as "
                                  "--log-json writes") from None
            if not isinstance(step, dict):
                raise ReportError(f"{path}:{number}: not a JSON object")
            for key in ("step", "loss"):
                if key not in step:
                    raise ReportError(f"{path}:{number}: no '{key}' (is this "
                                      "a training log from --log-json?)")
            if not isinstance(step["step"], int) or not (
                    step["loss"] is None
                    or isinstance(step["loss"], (int, float))):
                raise ReportError(f"{path}:{number}: 'step' must be an "
                                  "integer and 'loss' a number")
            if steps and step["step"] <= steps[-1]["step"]:
                raise ReportError(
                    f"{path}:{number}: step {step['step']} after step "
                    f"{steps[-1]['step']} (one run per log: --log-json "
                    "appends, remove the file between runs)")
            steps.append(step)
    if not steps:
        raise ReportError(f"'{path}': no steps")
    return steps


def read_plan(path):
    try:
        with open(path) as f:
            plan = json.load(f)
    except OSError as e:
        raise ReportError(f"'{path}': cannot open: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"'{path}': not JSON ({e.msg})") from None
    if not isinstance(plan, dict) or "prediction" not in plan or \
            "plan" not in plan:
        raise ReportError(f"'{path}': not a plan (no plan / prediction; "
                          "megagraph-compile --emit=plan writes one)")
    return plan


def _bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"


def _seconds(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} us"


def _curve(svg_id, title, series, width=520, height=220):
    """A line chart of series [(label, color, [(x, y)])], y over its range."""
    points = [p for _, _, ps in series for p in ps]
    if not points:
        return ""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1
    left, top, pw, ph = 60, 10, width - 80, height - 40
    out = [f'<h3>{html.escape(title)}</h3>',
           f'<svg id="{svg_id}" width="{width}" height="{height}" '
           'xmlns="http://www.w3.org/2000/svg">']
    for i in range(5):
        v = y0 + (y1 - y0) * i / 4
        y = top + ph - ph * i / 4
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" '
                   f'y2="{y:.1f}" stroke="#eee"/><text x="0" y="{y + 4:.1f}">'
                   f'{v:.4g}</text>')
    for label, color, ps in series:
        if not ps:
            continue
        coords = " ".join(
            f"{left + pw * (x - x0) / (x1 - x0):.1f},"
            f"{top + ph - ph * (y - y0) / (y1 - y0):.1f}" for x, y in ps)
        out.append(f'<polyline class="curve" data-label="{html.escape(label)}"'
                   f' data-points="{len(ps)}" fill="none" stroke="{color}" '
                   f'stroke-width="1.5" points="{coords}"/>')
    out.append(f'<text x="{left}" y="{height - 8}">step {x0:g}</text>'
               f'<text x="{left + pw - 50}" y="{height - 8}">step {x1:g}'
               '</text>')
    legend = "".join(
        f'<tspan fill="{c}">&#9632; {html.escape(lbl)}  </tspan>'
        for lbl, c, ps in series if ps)
    out.append(f'<text x="{left + 10}" y="{top + 12}">{legend}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _memory_chart(measured, predicted):
    """Per rank: the predicted peak (grey) and the measured one (blue)."""
    ranks = len(measured)
    top_value = max(measured + [predicted or 0]) * 1.05 or 1
    left, top, ph, step = 70, 10, 200, 70
    width = left + ranks * step + 20
    out = ['<svg id="measured-memory" width="%d" height="%d" '
           'xmlns="http://www.w3.org/2000/svg">' % (width, ph + 50)]
    for i in range(5):
        y = top + ph - ph * i / 4
        out.append(f'<line x1="{left - 4}" x2="{width - 10}" y1="{y:.1f}" '
                   f'y2="{y:.1f}" stroke="#eee"/><text x="0" y="{y + 4:.1f}">'
                   f'{_bytes(top_value * i / 4)}</text>')
    for r, value in enumerate(measured):
        x = left + r * step
        out.append(f'<g class="rank-memory" data-rank="{r}" '
                   f'data-measured="{value}" data-predicted="{predicted or 0}">')
        if predicted:
            h = ph * predicted / top_value
            out.append(f'<rect class="predicted" x="{x}" y="{top + ph - h:.1f}"'
                       f' width="24" height="{h:.1f}" fill="#bbb"><title>rank '
                       f'{r} predicted {_bytes(predicted)}</title></rect>')
        h = ph * value / top_value
        out.append(f'<rect class="measured" x="{x + 26}" y="{top + ph - h:.1f}"'
                   f' width="24" height="{h:.1f}" fill="#4e79a7"><title>rank '
                   f'{r} measured {_bytes(value)}</title></rect>')
        out.append(f'<text x="{x}" y="{top + ph + 16}">rank {r}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def render(steps, plan=None, log_name="log"):
    """The page for `steps` (read_log) and an optional plan (read_plan)."""
    pred = plan["prediction"] if plan else None
    plan_string = plan.get("plan_string", "") if plan else ""
    times = [s.get("step_time_s") for s in steps
             if isinstance(s.get("step_time_s"), (int, float))]
    measured_step = statistics.median(times[1:] if len(times) > 1 else times) \
        if times else None
    ranks = max((len(s["peak_bytes"]) for s in steps
                 if isinstance(s.get("peak_bytes"), list)), default=0)
    measured = [max(s["peak_bytes"][r] for s in steps
                    if isinstance(s.get("peak_bytes"), list)
                    and len(s["peak_bytes"]) > r) for r in range(ranks)]
    out = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8"/>',
           f'<title>MegaGraph run {html.escape(plan_string or log_name)}'
           '</title>\n<style>body{font-family:system-ui,sans-serif;'
           'margin:2em;color:#222;max-width:1100px}h1{font-size:1.5em}'
           'h2{font-size:1.15em;margin-top:2em}h3{font-size:1em}'
           'table{border-collapse:collapse}td,th{padding:2px 10px;'
           'text-align:left;border-bottom:1px solid #ddd;font-size:0.9em}'
           'svg text{font-size:11px;font-family:system-ui,sans-serif}'
           '</style>\n</head>\n<body>',
           f'<h1>MegaGraph run: {len(steps)} steps'
           + (f' of plan <code>{html.escape(plan_string)}</code>'
              if plan_string else '') + '</h1>',
           '<h2>Predicted and measured</h2>',
           '<table id="comparison"><tr><th></th><th>predicted</th>'
           '<th>measured</th><th>measured / predicted</th></tr>']

    def ratio(m, p):
        return f"{m / p:.2f}x" if m and p else "-"

    p_step = pred.get("step_time_s") if pred else None
    out.append(f'<tr><th>step time (median after step 1)</th><td>'
               f'{_seconds(p_step)}</td><td>{_seconds(measured_step)}</td>'
               f'<td>{ratio(measured_step, p_step)}</td></tr>')
    p_peak = pred.get("peak_bytes") if pred else None
    m_peak = max(measured) if measured else None
    out.append(f'<tr><th>peak memory per device (largest rank)</th><td>'
               f'{_bytes(p_peak) if p_peak else "-"}</td><td>'
               f'{_bytes(m_peak) if m_peak else "- (not logged)"}</td>'
               f'<td>{ratio(m_peak, p_peak)}</td></tr>')
    last = steps[-1]
    out.append(f'<tr><th>final loss</th><td></td><td>{last["loss"]:.4f}'
               '</td><td></td></tr></table>'
               if isinstance(last["loss"], (int, float)) else '</table>')
    if measured:
        out.append('<h2>Peak memory per rank</h2><p>Predicted '
                   '<span style="color:#999">&#9632;</span> (the most loaded '
                   'device\'s, from the plan), measured <span style="color:'
                   '#4e79a7">&#9632;</span> (the runtime\'s tracked peak, '
                   'largest over the steps).</p>')
        out.append(_memory_chart(measured, p_peak))

    def series(key):
        return [(s["step"], s[key]) for s in steps
                if isinstance(s.get(key), (int, float))
                and math.isfinite(s[key])]

    out.append('<h2>Curves</h2>')
    out.append(_curve("loss-curve", "loss", [("loss", "#e15759",
                                              series("loss"))]))
    out.append(_curve("accuracy-curve", "accuracy",
                      [("train accuracy", "#4e79a7", series("accuracy")),
                       ("test accuracy", "#59a14f",
                        series("test_accuracy"))]))
    if times:
        out.append(_curve("step-time-curve", "step time (s)",
                          [("step time", "#b07aa1", series("step_time_s"))]))
    out.append("</body>\n</html>\n")
    return "\n".join(o for o in out if o)


def write_report(log, plan=None, output=None):
    """Writes the page for log file `log` (and plan JSON file `plan`);
    returns its path (default: LOG with .html)."""
    steps = read_log(log)
    plan_data = read_plan(plan) if plan else None
    output = output or os.path.splitext(log)[0] + ".html"
    with open(output, "w") as f:
        f.write(render(steps, plan_data, os.path.basename(log)))
    return output


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="megagraph-report",
        description="A training run's measured memory, step time and "
        "curves beside the plan's predictions, as an HTML page.")
    parser.add_argument("log", help="the executable's --log-json file")
    parser.add_argument("--plan", help="the plan JSON (DIR/plan.json of "
                        "megagraph-compile --plan-report DIR)")
    parser.add_argument("-o", "--output", help="the page (default: LOG "
                        "with .html)")
    args = parser.parse_args(argv)
    try:
        path = write_report(args.log, args.plan, args.output)
    except ReportError as e:
        print(f"megagraph-report: error: {e}", file=sys.stderr)
        return 1
    print(f"megagraph-report: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
