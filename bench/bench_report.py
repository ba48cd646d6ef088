"""Helpers shared by the result writers of bench/run_*_bench.sh: shell
output, /usr/bin/time -v figures, and the machine section of a results file.

Imported from the scripts' inline Python (sys.path gets bench/)."""

import platform
import re
import subprocess


def sh(cmd):
    """stdout of a shell command, stripped; "" if it cannot run."""
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def gnu_time(path):
    """/usr/bin/time -v: max RSS MiB, user s, sys s, minor page faults."""
    t = open(path).read()

    def num(pat):
        return float(re.search(pat, t).group(1))
    return dict(rss=num(r"Maximum resident set size \(kbytes\): (\d+)") / 1024,
                user=num(r"User time \(seconds\): ([\d.]+)"),
                sys=num(r"System time \(seconds\): ([\d.]+)"),
                faults=num(r"Minor \(reclaiming a frame\) page faults: (\d+)"))


def machine_lines(root, start, end, load_before, load_after, nice):
    """The "## Machine" bullet list: CPU, OS, LibTorch, OpenBLAS, commit,
    date and load (the 2 cores are shared with other jobs)."""
    lscpu = sh("lscpu")

    def field(name):
        m = re.search(rf"^{name}:\s*(.*)$", lscpu, re.M)
        return m.group(1).strip() if m else "?"
    openblas = sh("dpkg-query -W -f='${Version}' libopenblas0-pthread")
    mem = sh("grep MemTotal /proc/meminfo | "
             "awk '{printf \"%.1f GiB\", $2/1048576}'")
    commit = sh(f"git -C {root} rev-parse --short HEAD")
    dirty = sh(f"git -C {root} status --porcelain")
    cpus = field(r"CPU\(s\)")
    cores = field(r"Core\(s\) per socket")
    tpc = field(r"Thread\(s\) per core")
    import torch
    return [
        f"- CPU: {field('Model name')}, {cpus} CPU(s) ({cores} core(s)/socket, "
        f"{tpc} thread(s)/core), hypervisor: {field('Hypervisor vendor')}; "
        f"memory {mem}",
        f"- OS: {platform.platform()}; {sh('g++ --version | head -1')}",
        f"- LibTorch / PyTorch {torch.__version__} (Debian libtorch-dev), "
        f"OpenBLAS {openblas}",
        f"- MegaGraph: commit {commit}"
        f"{' + uncommitted changes' if dirty else ''}",
        f"- Date: {start} .. {end}; load average before {load_before}, after "
        f"{load_after} (the 2 cores are shared with other jobs"
        + (f"; both binaries ran under nice -n {nice}" if nice else "") + ")",
    ]
