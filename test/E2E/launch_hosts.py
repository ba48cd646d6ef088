#!/usr/bin/env python3
"""Launching a training executable as on a cluster, on this one machine.

TwoHosts: two network namespaces joined by a veth pair, each a "host" with
its own host name (a UTS namespace per process started in it) and its own
address (169.254.77.1 and .2, link-local: no route leaves the pair), each
resolving both names through /etc/netns/<ns>/hosts, which `ip netns exec`
mounts over /etc/hosts. `mpirun` runs on the first host and starts the
second host's daemon through an rsh agent that enters its namespace instead
of ssh; Open MPI talks TCP between the two addresses (no shared memory).
Everything it made is removed on exit.

SlurmCluster: a one-node Slurm cluster (slurmctld + slurmd of Debian's
slurm-wlm) configured in a temporary folder, no munge (auth/none), whose
`srun` starts the ranks; stopped and removed on exit.

Both need root. `require(...)` says what is missing.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

HOSTS = ("mg-host-a", "mg-host-b")
SUBNET = "169.254.77.0/24"
ADDRESSES = ("169.254.77.1", "169.254.77.2")


def missing(*tools):
    """What of root and `tools` this machine lacks, as words ("" if none)."""
    lack = [t for t in tools if not shutil.which(t)]
    if os.geteuid() != 0:
        lack.insert(0, "root")
    return ", ".join(lack)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kw)


class TwoHosts:
    def __init__(self, work):
        self.work = work
        tag = str(os.getpid())
        self.ns = (f"mg{tag}a", f"mg{tag}b")
        self.links = (f"mgv{tag}a", f"mgv{tag}b")
        self.agent = os.path.join(work, "netns-agent.sh")

    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _setup(self):
        for ns in self.ns:
            run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", self.links[0], "netns", self.ns[0], "type",
             "veth", "peer", "name", self.links[1], "netns", self.ns[1]])
        hosts = "127.0.0.1 localhost\n" + "".join(
            f"{a} {h}\n" for a, h in zip(ADDRESSES, HOSTS))
        for ns, link, addr in zip(self.ns, self.links, ADDRESSES):
            run(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", link])
            run(["ip", "-n", ns, "link", "set", link, "up"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write(hosts)
        # mpirun's rsh agent: `AGENT HOST COMMAND...` runs COMMAND (one
        # shell line, as ssh would) on HOST: in its namespace, under its
        # name.
        cases = "".join(f"  {h}) ns={ns} ;;\n" for h, ns in
                        zip(HOSTS, self.ns))
        with open(self.agent, "w") as f:
            f.write("#!/bin/sh\n"
                    "host=$1; shift\n"
                    "case $host in\n" + cases +
                    "  *) echo \"netns-agent: no host $host\" >&2; exit 1 ;;\n"
                    "esac\n"
                    "exec ip netns exec \"$ns\" unshare --uts /bin/sh -c "
                    "'hostname \"$0\" && exec /bin/sh -c \"$1\"' "
                    "\"$host\" \"$*\"\n")
        os.chmod(self.agent, 0o755)

    def forget_names(self):
        """From now on neither host resolves the other's name."""
        for ns in self.ns:
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write("127.0.0.1 localhost\n")

    def on_host(self, i, cmd):
        """`cmd` as started on host i (its namespace and name)."""
        return ["ip", "netns", "exec", self.ns[i], "unshare", "--uts", "sh",
                "-c", 'hostname "$0" && exec "$@"', HOSTS[i], *cmd]

    def mpirun(self, cmd, env_names=()):
        """mpirun on the first host, one rank on each, over TCP; `env_names`
        are passed to the ranks (-x)."""
        line = ["mpirun", "--allow-run-as-root", "-np", "2", "--host",
                f"{HOSTS[0]}:1,{HOSTS[1]}:1", "--mca", "plm_rsh_agent",
                self.agent, "--mca", "btl", "tcp,self", "--mca",
                "btl_tcp_if_include", SUBNET, "--mca", "oob_tcp_if_include",
                SUBNET]
        for name in env_names:
            line += ["-x", name]
        return self.on_host(0, line + list(cmd))

    def __exit__(self, *exc):
        for ns in self.ns:
            out = subprocess.run(["ip", "netns", "pids", ns],
                                 capture_output=True, text=True).stdout
            for pid in out.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        return False


class SlurmCluster:
    """One node (this machine, under its host name) with CPUS cpus."""

    def __init__(self, work, cpus=2):
        self.dir = tempfile.mkdtemp(prefix="slurm-", dir=work)
        self.cpus = cpus
        self.procs = []
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir,
                                                            "slurm.conf"))

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _free_port(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def _start(self):
        d = self.dir
        node = socket.gethostname()
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        ctld, slurmd = self._free_port(), self._free_port()
        conf = f"""ClusterName=megagraph
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
"""
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write(conf)
        # In the foreground (-D) as our children, so that they end with us.
        for daemon in ("slurmctld", "slurmd"):
            log = open(os.path.join(d, daemon + ".out"), "w")
            self.procs.append(subprocess.Popen(
                [daemon, "-D", "-f", self.env["SLURM_CONF"]], env=self.env,
                stdout=log, stderr=subprocess.STDOUT))
        # Up when the node is idle.
        deadline = time.time() + 60
        state = ""
        while time.time() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited ({p.returncode}); "
                                       f"see {d}")
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"],
                                 env=self.env, capture_output=True, text=True)
            state = out.stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Slurm node is not idle after 60 s "
                           f"(state '{state}'); see {d}")

    def log(self, daemon):
        try:
            return open(os.path.join(self.dir, daemon + ".log")).read()
        except OSError:
            return ""

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        return False
