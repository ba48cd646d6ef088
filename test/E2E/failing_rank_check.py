#!/usr/bin/env python3
"""A killed or stopped rank ends the whole training job with a message
naming it (runtime/comm/Heartbeat.h).

export_npy_check.py's node classifier is compiled with `--train --plan
dp=P` (or pp=2) and trained under `mpirun -np P` for a practically endless
number of steps, checkpointing after every step (so that a kill often
lands in the middle of writing one), with
MEGAGRAPH_HEARTBEAT_TIMEOUT=5. Once the log shows steps and a checkpoint
exists, one rank gets SIGKILL or SIGSTOP. Then:
  * the job ends within 60 s of the signal (a hang fails the check after
    90 s) with a non-zero exit code;
  * every other rank printed `megagraph comm: rank R of P: lost peer rank
    V (...)` naming the victim V (each victim differs from rank 0 in some
    case, so a message that always named rank 0 would fail);
  * `latest` of the checkpoint folder names a complete checkpoint (its
    manifest and every rank's state file) and, once per run, a new job
    resumes from it;
  * a rank stopped for 2 s (less than the timeout) and continued is only
    slow: the job finishes with exit code 0 and no message;
  * (badenv) MEGAGRAPH_HEARTBEAT_TIMEOUT=abc is refused by every rank.
A stopped rank is SIGKILLed at the end of its case.

usage: failing_rank_check.py MEGAGRAPH_COMPILE WORKDIR CASE...
  CASE: dp2-kill-1, dp4-stop-1, pp2-kill-0, dp2-slow-1, dp2-badenv-0, ...
        (plan, signal, victim rank)
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import write_onnx  # noqa: E402  (the classifier)
from train_dp_check import Checks, mpirun  # noqa: E402

DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"
TIMEOUT = 5  # MEGAGRAPH_HEARTBEAT_TIMEOUT of the runs
# plan -> (ranks, per-rank ONNX batch, megagraph-compile --plan)
PLANS = {"dp2": (2, 2, "dp=2"), "dp4": (4, 1, "dp=4"),
         "pp2": (2, 4, "dp=1,pp=2,mb=2")}


def compile_plan(compiler, work, plan):
    ranks, batch, flag = PLANS[plan]
    exe = os.path.join(work, plan)
    if not os.path.exists(exe):
        onnx_path = exe + ".onnx"
        write_onnx(onnx_path, batch, "x")
        subprocess.run([compiler, onnx_path, "--train", "--optimizer", "sgd",
                        "--lr", "0.05", "--plan", flag, "--emit=exe", "-O0",
                        "-o", exe], check=True)
    return exe, ranks


def rank_pids(launcher, ranks, deadline):
    """{rank: pid} of the launcher's rank processes (its children that
    carry OMPI_COMM_WORLD_RANK)."""
    while time.time() < deadline:
        found = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid != launcher:
                    continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = dict(v.split(b"=", 1) for v in f.read().split(b"\0")
                               if b"=" in v)
            except (OSError, ValueError, IndexError):
                continue
            if b"OMPI_COMM_WORLD_RANK" in env:
                found[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(pid)
        if len(found) == ranks:
            return found
        time.sleep(0.1)
    return None


def records(log):
    try:
        return [json.loads(l) for l in open(log) if l.strip()]
    except (OSError, ValueError):
        return []


def complete(ck, ranks):
    """The folder `latest` names and whether it is a whole checkpoint."""
    try:
        name = open(os.path.join(ck, "latest")).read().strip()
        files = sorted(os.listdir(os.path.join(ck, name)))
    except OSError:
        return None, False
    want = sorted(["manifest"] + [f"rank{r}.state" for r in range(ranks)])
    return name, files == want


def bad_setting(check, exe, ranks, case):
    """A heartbeat timeout that is no number stops every rank at start-up
    with one line naming the variable."""
    env = dict(os.environ, MEGAGRAPH_HEARTBEAT_TIMEOUT="abc")
    r = subprocess.run(mpirun() + ["-np", str(ranks), exe, "--mode", "train",
                                   "--data", DATA, "--steps", "2", "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=120, text=True)
    lines = [l for l in r.stdout.splitlines()
             if "MEGAGRAPH_HEARTBEAT_TIMEOUT='abc' is not a number" in l]
    check(f"{case}: refused", r.returncode != 0 and len(lines) == ranks,
          f"exit code {r.returncode}: {lines[:1]}")


def run_case(check, compiler, work, case, resume):
    plan, action, victim = case.split("-")
    victim = int(victim)
    exe, ranks = compile_plan(compiler, work, plan)
    if action == "badenv":
        return bad_setting(check, exe, ranks, case)
    tag = case
    log = os.path.join(work, tag + ".jsonl")
    ck = os.path.join(work, tag + "_ck")
    out_path = os.path.join(work, tag + ".out")
    for p in (log, out_path):
        if os.path.exists(p):
            os.remove(p)
    shutil.rmtree(ck, ignore_errors=True)
    env = dict(os.environ, MEGAGRAPH_HEARTBEAT_TIMEOUT=str(TIMEOUT))
    steps = 150 if action == "slow" else 10 ** 7
    cmd = mpirun() + ["-np", str(ranks), exe, "--mode", "train", "--data",
                      DATA, "--steps", str(steps), "--log-json", log,
                      "--quiet", "--checkpoint-dir", ck,
                      "--checkpoint-every", "1"]
    out = open(out_path, "w")
    job = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    pids = rank_pids(job.pid, ranks, time.time() + 60)
    started = time.time()
    while pids and time.time() - started < 120 and job.poll() is None and (
            len(records(log)) < 4 or not complete(ck, ranks)[1]):
        time.sleep(0.05)
    if not pids or job.poll() is not None:
        check(f"{case}: started", False,
              f"rank pids {pids}, exit code {job.poll()}")
        job.kill()
        return
    before = len(records(log))
    t0 = time.time()
    if action == "kill":
        os.kill(pids[victim], signal.SIGKILL)
    else:
        os.kill(pids[victim], signal.SIGSTOP)
    if action == "slow":
        time.sleep(2)
        os.kill(pids[victim], signal.SIGCONT)
    try:
        rc = job.wait(timeout=90)
    except subprocess.TimeoutExpired:
        rc = None
    elapsed = time.time() - t0
    for pid in pids.values():  # the stopped rank, or anything left over
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if rc is None:
        job.kill()
        job.wait()
    out.close()
    text = open(out_path).read()
    lines = [l for l in text.splitlines() if l.startswith("megagraph comm:")]
    after = len(records(log))
    if action == "slow":
        check(f"{case}: a rank stopped for 2 s is only slow", rc == 0 and
              not lines and after == steps,
              f"exit code {rc}, {after} of {steps} steps, messages {lines}")
        return
    check(f"{case}: ended", rc is not None and rc != 0 and elapsed < 60,
          f"exit code {rc} {elapsed:.1f} s after SIG{action.upper()} of rank "
          f"{victim} (after {before} steps, {after} logged)")
    for r in range(ranks):
        if r == victim:
            continue
        pat = re.compile(rf"^megagraph comm: rank {r} of {ranks}: lost peer "
                         rf"rank {victim} \(.*\)")
        mine = [l for l in lines if l.startswith(f"megagraph comm: rank {r} ")]
        check(f"{case}: rank {r} names the lost rank",
              len(mine) == 1 and bool(pat.match(mine[0])),
              f"{mine if mine else 'no line; output: ' + text[-2000:]!r}")
    name, whole = complete(ck, ranks)
    check(f"{case}: checkpoint intact", whole,
          f"latest {name}: {sorted(os.listdir(os.path.join(ck, name))) if name else []}")
    if resume and whole:
        done = int(name.split("-")[1])
        rlog = os.path.join(work, tag + "_resume.jsonl")
        if os.path.exists(rlog):
            os.remove(rlog)
        r = subprocess.run(mpirun() + ["-np", str(ranks), exe, "--mode",
                                       "train", "--data", DATA, "--steps",
                                       str(done + 2), "--log-json", rlog,
                                       "--quiet", "--resume", ck],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120, env=env)
        got = [rec.get("step") for rec in records(rlog)]
        check(f"{case}: resumed from {name}",
              r.returncode == 0 and got == [done + 1, done + 2],
              f"exit code {r.returncode}, steps {got}")


def main():
    compiler, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    for i, case in enumerate(sys.argv[3:]):
        run_case(check, compiler, work, case, resume=i == 0)
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
