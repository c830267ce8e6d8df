#!/usr/bin/env python3
"""Runs scripts/slurm_sweep_array.sh under a real single-node Slurm: a slurmctld and a slurmd
started here for this host, from a minimal slurm.conf in a temporary directory (auth/none, so no
munge; one "gpu" GRES backed by /dev/null, so the script's --gres=gpu:1 is satisfiable without a
GPU; the tasks then run one after another).
It submits the array in dry-run mode (--dry-run --json per shard: no GPU needed) and checks the
array mapping: task K of N runs shard K/N, every task completes, and the shards' points add up to
the whole plan with none twice.

Exits 77 (ctest: skipped) when Slurm is not installed or its daemons do not start; CI does not
install Slurm (apt-get install slurm-wlm to run it). Run: MHA_BUILD_DIR=build-ci python3
tests/test_slurm_sweep_array.py."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from mha_test_env import REPO, MHA_TUNE as BINARY  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "slurm_sweep_array.sh")
CONFIG = os.path.join(REPO, "configs", "suites", "ci.json")
SKIP = 77
TASKS = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find(tool):
    return shutil.which(tool) or next((p for p in (f"/usr/sbin/{tool}", f"/usr/bin/{tool}")
                                       if os.path.exists(p)), None)


class LocalSlurm:
    """slurmctld + slurmd for this host, state and logs under `root`."""

    def __init__(self, root):
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.procs = []
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        cpus = os.cpu_count() or 1
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=mhatest
SlurmctldHost={self.host}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
GresTypes=gpu
NodeName={self.host} CPUs={cpus} Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        with open(os.path.join(root, "gres.conf"), "w") as f:
            # A "gpu" needs a device file: /dev/null stands in (no cgroup confines devices here).
            f.write(f"NodeName={self.host} Name=gpu File=/dev/null Count=1\n")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        for daemon in ("slurmctld", "slurmd"):
            args = [find(daemon), "-D", "-f", self.conf] + (["-c"] if daemon == "slurmctld" else [])
            with open(os.path.join(self.root, "log", f"{daemon}.out"), "w") as log:
                self.procs.append(subprocess.Popen(args, env=self.env, stdout=log, stderr=log))
            time.sleep(1)
        deadline = time.time() + 30
        while time.time() < deadline:
            r = self.run("sinfo", "-h", "-o", "%t", check=False)
            if r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc"):
                return True
            if any(p.poll() is not None for p in self.procs):
                return False
            time.sleep(0.5)
        return False

    def run(self, *args, check=True, **kw):
        r = subprocess.run(list(args), env=kw.pop("env", self.env), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60, **kw)
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr}")
        return r

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"):
            path = os.path.join(self.root, "log", name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f"--- {name}\n" + "".join(f.readlines()[-15:]))
        return "\n".join(out)

    def stop(self):
        for p in self.procs:  # only the daemons this test started, by their own process
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


class SlurmSweepArray(unittest.TestCase):
    def test_array_maps_tasks_to_shards_and_dry_runs_each(self):
        tmp = self.tmp
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env = dict(self.slurm.env, MHA_TUNE_BINARY=BINARY, MHA_SWEEP_CONFIG=CONFIG,
                   MHA_SHARD_DIR=os.path.join(work, "shards"), MHA_SWEEP_ARGS="--dry-run --json")
        # --cpus-per-task=1: the script asks for 4, more than a small CI host has.
        r = self.slurm.run(SCRIPT, f"--array=0-{TASKS - 1}", "--time=00:05:00", "--cpus-per-task=1",
                           f"--output={work}/slurm_%A_%a.log", cwd=work, env=env)
        m = re.search(r"array (\d+)", r.stdout)
        self.assertTrue(m, r.stdout)
        job = m.group(1)
        deadline = time.time() + 120
        while time.time() < deadline:
            if not self.slurm.run("squeue", "-h", "-j", job, check=False).stdout.strip():
                break
            time.sleep(1)
        else:
            queue = self.slurm.run("squeue", "-j", job, check=False).stdout
            self.fail(f"array {job} still queued after 120 s\n{queue}\n{self.slurm.logs()}")

        whole = json.loads(subprocess.run([BINARY, "sweep", "--dry-run", "--json", "--config", CONFIG],
                                          stdout=subprocess.PIPE, check=True).stdout)
        points = set()
        count = 0
        for k in range(TASKS):
            state = self.slurm.run("scontrol", "show", "job", f"{job}_{k}").stdout
            self.assertIn("JobState=COMPLETED", state, state + self.slurm.logs())
            self.assertIn("ExitCode=0:0", state)
            with open(os.path.join(work, f"slurm_{job}_{k}.log")) as f:
                plan = json.loads(f.read())
            self.assertEqual(plan["shard"], {"index": k, "count": TASKS})
            count += plan["counts"]["points"]
            for q in plan["problems"]:
                for kernel in q["kernels"]:
                    for p in q["partitions"]:
                        points.add((kernel, q["name"], p))
        self.assertEqual(count, whole["counts"]["points"])  # each point in exactly one shard
        self.assertLessEqual(len(points), count)

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="mha_slurm_")
        cls.tmp = cls._tmp.name
        cls.slurm = LocalSlurm(os.path.join(cls.tmp, "slurm"))
        if not cls.slurm.start():
            logs = cls.slurm.logs()
            cls.slurm.stop()
            cls._tmp.cleanup()
            print(f"Slurm daemons did not start: Slurm test skipped\n{logs}", file=sys.stderr)
            sys.exit(SKIP)

    @classmethod
    def tearDownClass(cls):
        cls.slurm.stop()
        cls._tmp.cleanup()


if __name__ == "__main__":
    missing = [t for t in ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo") if not find(t)]
    if missing:
        print(f"Slurm not installed ({', '.join(missing)} missing): Slurm test skipped",
              file=sys.stderr)
        sys.exit(SKIP)
    if not os.path.exists(BINARY):
        print(f"{BINARY} not built: Slurm test skipped", file=sys.stderr)
        sys.exit(SKIP)
    unittest.main()
