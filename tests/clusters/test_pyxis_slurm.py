"""``srun --container-image`` on a fresh node, with a real Slurm: the plugin stack ``install_pyxis.sh`` writes is the
one a slurmd started after it (ParallelCluster's ``OnNodeStart``) and srun load.

pyxis itself cannot be built here (its source is on GitHub and the pinned tag is fetched by the script), so the
plugin the stack names (``spank_pyxis.so``) is a small SPANK plugin compiled by the test that registers pyxis's
``--container-image`` option and, on the node, records the image the job asked for. What runs for real: the
script (bash, with package managers and builds stubbed as in ``script_sandbox``), munge, slurmctld, slurmd,
srun and the job step. Skipped where Slurm's daemons, its SPANK header or root are not available (CI).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.clusters.script_sandbox import Sandbox

NEEDED = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "gcc")
SPANK_HEADER = Path("/usr/include/slurm/spank.h")
pytestmark = pytest.mark.skipif(
    any(shutil.which(n, path=f"{os.environ.get('PATH', '')}:/usr/sbin") is None for n in NEEDED)
    or not SPANK_HEADER.is_file() or os.geteuid() != 0,
    reason="needs Slurm's daemons and srun, munge, gcc, slurm/spank.h and root (apt: slurmd slurmctld "
           "slurm-client libslurm-dev munge)")

PLUGIN = r"""
#include <slurm/spank.h>
#include <stdio.h>
SPANK_PLUGIN(pyxis_stand_in, 1);
static char image[256] = "";
static int set_image(int val, const char *optarg, int remote) {
    snprintf(image, sizeof image, "%s", optarg ? optarg : "");
    return 0;
}
struct spank_option spank_options[] = {
    {"container-image", "IMAGE", "container image (stand-in for pyxis)", 1, 0, set_image},
    SPANK_OPTIONS_TABLE_END};
int slurm_spank_user_init(spank_t sp, int ac, char **av) {
    char out[512];
    if (!spank_remote(sp) || !image[0]) return 0;
    if (spank_getenv(sp, "STAND_IN_OUT", out, sizeof out) != ESPANK_SUCCESS) return -1;
    FILE *f = fopen(out, "a");
    if (!f) return -1;
    fprintf(f, "%s\n", image);
    fclose(f);
    return 0;
}
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sbin(name: str) -> str:
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin")


@pytest.fixture
def node():
    root = Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp"))  # short: munge's socket path has a length limit
    started: list[Path] = []
    try:
        yield root, started
    finally:
        pids = []
        for pid_file in started:
            if pid_file.is_file():
                with contextlib.suppress(ValueError):
                    pids.append(int(pid_file.read_text().split()[0]))
        # The daemons this test started, and the job step processes slurmd forked (they outlive it otherwise).
        for pid in [*_children(pids), *reversed(pids)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        time.sleep(1)
        shutil.rmtree(root, ignore_errors=True)


def _children(parents: list[int]) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if int(fields.get("PPid", "0")) in parents:
                found.append(int(status.parent.name))
    return found


def _slurm_conf(root: Path, plugstack: Path, munge_socket: Path) -> Path:
    host = socket.gethostname().split(".")[0]
    for sub in ("state", "spool"):
        (root / sub).mkdir()
    conf = root / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=geniactest", f"SlurmctldHost={host}", "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket}", f"SlurmctldPort={_port()}", f"SlurmdPort={_port()}",
        "SlurmUser=root", "SlurmdUser=root", f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}", f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}", f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}", f"PlugStackConfig={plugstack}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "SelectType=select/cons_tres", "MpiDefault=none", "ReturnToService=2",
        f"NodeName={host} CPUs=1 State=UNKNOWN", "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ""]))
    return conf


def test_a_slurmd_started_after_the_script_runs_a_container_image_job_through_the_plugin(node):
    root, started = node
    # The node's image: the plugin the stack names is in place (built on the node by the script otherwise).
    pyxis = root / "pyxis"
    pyxis.mkdir()
    (root / "plugin.c").write_text(PLUGIN)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(pyxis / "spank_pyxis.so"), str(root / "plugin.c")],
                   check=True, capture_output=True)
    # OnNodeStart: the script runs before slurmd exists.
    box = Sandbox(root / "node")
    result = box.run("install_pyxis.sh", env={"ENROOT_CONF_DIR": str(root / "enroot"), "PYXIS_LIB_DIR": str(pyxis),
                                              "PYXIS_RUNTIME_DIR": str(root / "run-pyxis"), "SLURMD_ACTIVE": "3"})
    assert result.returncode == 0, result.stderr
    assert not any(c.startswith(("git clone", "make")) for c in box.calls())  # the plugin was there: no build
    plugstack = root / "node" / "slurm" / "etc" / "plugstack.conf"
    assert plugstack.is_file()
    # Then the node's daemons start, reading the plugin stack the script wrote.
    munge = root / "munge"
    munge.mkdir(mode=0o755)
    (munge / "key").write_bytes(os.urandom(128))
    (munge / "key").chmod(0o600)
    subprocess.run([_sbin("munged"), "--force", f"--key-file={munge / 'key'}", f"--socket={munge / 'sock'}",
                    f"--pid-file={munge / 'pid'}", f"--log-file={munge / 'log'}", f"--seed-file={munge / 'seed'}"],
                   check=True, capture_output=True)
    started.append(munge / "pid")
    conf = _slurm_conf(root, plugstack, munge / "sock")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    subprocess.run([_sbin("slurmctld"), "-f", str(conf), "-i"], check=True, capture_output=True, env=env)
    started.append(root / "slurmctld.pid")
    subprocess.run([_sbin("slurmd"), "-f", str(conf)], check=True, capture_output=True, env=env)
    started.append(root / "slurmd.pid")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env).stdout.strip()
        if state == "idle":
            break
        time.sleep(0.5)
    assert state == "idle", (root / "slurmd.log").read_text()[-2000:]
    help_text = subprocess.run(["srun", "--help"], capture_output=True, text=True, env=env).stdout
    assert "--container-image=IMAGE" in help_text
    out = root / "images.txt"
    job = subprocess.run(["srun", "-N1", "--container-image=nvcr.io#nvidia/pytorch:25.01-py3", "true"],
                         capture_output=True, text=True, env={**env, "STAND_IN_OUT": str(out)}, timeout=60)
    assert job.returncode == 0, job.stderr
    assert out.read_text() == "nvcr.io#nvidia/pytorch:25.01-py3\n"  # the plugin ran in the job's step on the node
    deadline = time.monotonic() + 15  # let the step report its end before the daemons stop
    while subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=env).stdout.strip():
        assert time.monotonic() < deadline
        time.sleep(0.5)
