#!/usr/bin/env python3
"""A dp=2 training executable launched as on a cluster reproduces the
one-process run.

export_npy_check.py's node classifier, compiled with `--train --optimizer
adamw` for one process (batch 4) and for `--plan dp=2` (batch 2 a rank),
trains STEPS steps; the per-step losses of each launch below must equal
the one-process run's within 1e-4 relative (launch_hosts.py sets the
launches up, and removes them after):

  netns  two "hosts" (network namespaces with their own names and
         addresses on a veth pair); `mpirun` on the first starts the
         second's rank through an rsh agent, MPI over TCP between the two
         addresses. Also: the ranks report different host names and
         network namespaces; no rank warns that its heartbeat could not
         connect (the heartbeat resolves the other host's name); and a
         SIGKILL of rank 1 on the second host ends the job with rank 0
         naming it (MEGAGRAPH_HEARTBEAT_TIMEOUT=5). Then the hosts forget
         each other's names: MPI still runs (it exchanges addresses), and
         the heartbeat is off with one warning per rank, given at once
         (rank 1 cannot resolve 'mg-host-a'; rank 0 hears so instead of
         waiting 30 s for a connection), and the trajectory is the same.
  slurm  a one-node Slurm cluster started here; `srun -n 2 --mpi=pmix`
         starts the ranks (no mpirun); they report Slurm's process ids.

A part whose tools are missing (root, ip and unshare; slurmctld, slurmd
and srun) FAILs, naming them: scripts/setup.sh installs them, and the lit
test runs only where lit.cfg.py found them (or under CI, where they must
be there).

usage: launch_cluster_check.py MEGAGRAPH_COMPILE WORKDIR PART...
Prints `check: ... OK|FAIL` lines; exits 1 on FAIL.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_npy_check import write_onnx  # noqa: E402  (the classifier)
from launch_hosts import SlurmCluster, TwoHosts, missing  # noqa: E402
from train_dp_check import Checks  # noqa: E402

STEPS = 20
TOL = 1e-4
DATA = "synthetic:sbm,nodes=256,classes=4,features=3,signal=3,seed=5"


def compile_exe(compiler, work, name, batch, plan):
    onnx_path = os.path.join(work, name + ".onnx")
    write_onnx(onnx_path, batch, "x")
    exe = os.path.join(work, name)
    subprocess.run([compiler, onnx_path, "--train", "--optimizer", "adamw",
                    "--lr", "0.05", *plan, "--emit=exe", "-O0", "-o", exe],
                   check=True)
    return exe


def train_args(exe, log, steps=STEPS):
    return [exe, "--mode", "train", "--data", DATA, "--steps", str(steps),
            "--log-json", log, "--quiet"]


def losses(log):
    try:
        return {r["step"]: r["loss"] for r in map(json.loads, open(log))}
    except (OSError, ValueError):
        return {}


def compare(check, label, got, want):
    steps = sorted(got)
    if steps != sorted(want):
        check(f"{label}: trajectory", False,
              f"steps {steps[:3]}...{steps[-3:]} of {len(steps)}, want "
              f"{len(want)}")
        return
    d = max(abs(got[s] - want[s]) / abs(want[s]) for s in steps)
    check(f"{label}: trajectory", d <= TOL,
          f"{len(steps)} steps, losses within {d:.1e} <= {TOL:g} relative of "
          "the one-process run")


def launched(cmd, env, timeout=300):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def rank_pid(rank, tag, deadline):
    """The pid of the rank process with MG_LAUNCH_TAG=tag."""
    want = {b"MG_LAUNCH_TAG=" + tag.encode(),
            b"OMPI_COMM_WORLD_RANK=" + str(rank).encode()}
    while time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = set(f.read().split(b"\0"))
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    exe = f.read().split(b"\0")[0]
            except OSError:
                continue
            if want <= env and not exe.endswith((b"orted", b"mpirun",
                                                 b"sh", b"unshare")):
                return int(pid)
        time.sleep(0.2)
    return None


def check_netns(check, work, exe, want):
    lack = missing("ip", "unshare", "mpirun")
    if lack:
        check("netns: tools", False, f"missing: {lack}")
        return
    env = dict(os.environ, MG_LAUNCH_TAG=str(os.getpid()),
               MEGAGRAPH_HEARTBEAT_TIMEOUT="5")
    with TwoHosts(work) as hosts:
        # Where the ranks run.
        rc, out, err = launched(hosts.mpirun(
            ["sh", "-c", 'echo "rank $OMPI_COMM_WORLD_RANK $(hostname) '
             '$(readlink /proc/self/ns/net)"']), env, timeout=120)
        seen = sorted(line.split()[1:] for line in out.splitlines()
                      if line.startswith("rank "))
        names = [s[1] for s in seen]
        nets = {s[2] for s in seen if len(s) > 2}
        check("netns: placement", rc == 0 and names == ["mg-host-a",
                                                        "mg-host-b"]
              and len(nets) == 2,
              f"exit code {rc}, ranks on {names} in {len(nets)} network "
              f"namespaces {err.strip()[-300:] if rc else ''}")
        # The trajectory.
        log = os.path.join(work, "netns.jsonl")
        if os.path.exists(log):
            os.remove(log)
        rc, out, err = launched(hosts.mpirun(train_args(exe, log),
                                             ["MG_LAUNCH_TAG"]), env)
        check("netns: run", rc == 0 and "no heartbeat" not in err,
              f"exit code {rc}, heartbeat warnings "
              f"{[l for l in err.splitlines() if 'no heartbeat' in l]}"
              f"{' ' + err.strip()[-500:] if rc else ''}")
        compare(check, "netns", losses(log), want)
        # A lost rank on the other host.
        log = os.path.join(work, "netns_kill.jsonl")
        if os.path.exists(log):
            os.remove(log)
        job = subprocess.Popen(hosts.mpirun(train_args(exe, log, 1000000),
                                            ["MG_LAUNCH_TAG",
                                             "MEGAGRAPH_HEARTBEAT_TIMEOUT"]),
                               env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        pid = rank_pid(1, env["MG_LAUNCH_TAG"], deadline)
        while pid and time.time() < deadline and len(losses(log)) < 3 and \
                job.poll() is None:
            time.sleep(0.2)
        if pid and job.poll() is None:
            killed = time.time()
            os.kill(pid, signal.SIGKILL)
            try:
                out, err = job.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                job.kill()
                out, err = job.communicate()
            took = time.time() - killed
            named = [line for line in err.splitlines()
                     if line.startswith("megagraph comm: rank 0 of 2: lost "
                                        "peer rank 1")]
            check("netns: lost rank", job.returncode != 0 and took < 60
                  and bool(named),
                  f"exit code {job.returncode} {took:.1f} s after SIGKILL "
                  f"of rank 1 on mg-host-b: {named}")
        else:
            job.kill()
            job.communicate()
            check("netns: lost rank", False,
                  f"rank 1 pid {pid}, exit code {job.poll()} before the kill")
        # Names that do not resolve.
        hosts.forget_names()
        log = os.path.join(work, "netns_noname.jsonl")
        if os.path.exists(log):
            os.remove(log)
        rc, out, err = launched(hosts.mpirun(train_args(exe, log)), env)
        warned = sorted(re.sub(r": a lost peer.*", "", line) for line in
                        err.splitlines() if "warning: no heartbeat" in line)
        check("netns: unresolved names", rc == 0 and warned == [
            "megagraph comm: rank 0 of 2: warning: no heartbeat (another "
            "rank could not connect to its peers)",
            "megagraph comm: rank 1 of 2: warning: no heartbeat (cannot "
            "resolve host 'mg-host-a' of rank 0)"],
              f"exit code {rc}, warnings {warned}")
        compare(check, "netns unresolved", losses(log), want)


def check_slurm(check, work, exe, want):
    lack = missing("slurmctld", "slurmd", "srun", "sinfo")
    if lack:
        check("slurm: tools", False, f"missing: {lack}")
        return
    with SlurmCluster(work) as cluster:
        rc, out, err = launched(
            ["srun", "-n", "2", "--mpi=pmix", "sh", "-c",
             'echo "task $SLURM_PROCID $PMIX_RANK"'], cluster.env,
            timeout=120)
        tasks = sorted(line.split()[1:] for line in out.splitlines()
                       if line.startswith("task "))
        check("slurm: tasks", rc == 0 and tasks == [["0", "0"], ["1", "1"]],
              f"exit code {rc}, SLURM_PROCID/PMIX_RANK "
              f"{' '.join('/'.join(t) for t in tasks)}"
              f"{' ' + err.strip()[-300:] if rc else ''}")
        log = os.path.join(work, "slurm.jsonl")
        if os.path.exists(log):
            os.remove(log)
        rc, out, err = launched(["srun", "-n", "2", "--mpi=pmix",
                                 *train_args(exe, log)], cluster.env)
        check("slurm: run", rc == 0, f"exit code {rc}"
              f"{' ' + err.strip()[-800:] if rc else ''}"
              f"{' ' + cluster.log('slurmd')[-800:] if rc else ''}")
        compare(check, "slurm", losses(log), want)


def main():
    compiler, work = sys.argv[1:3]
    parts = sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    check = Checks()
    single = compile_exe(compiler, work, "single", 4, [])
    dp2 = compile_exe(compiler, work, "dp2", 2, ["--plan", "dp=2"])
    log = os.path.join(work, "single.jsonl")
    if os.path.exists(log):
        os.remove(log)
    subprocess.run(train_args(single, log), check=True)
    want = losses(log)
    check("single: records", len(want) == STEPS, f"{len(want)} steps")
    if "netns" in parts:
        check_netns(check, work, dp2, want)
    if "slurm" in parts:
        check_slurm(check, work, dp2, want)
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
