"""The portal's agent on the embedded endpoint's HyperPod Slurm controllers: the same program the lifecycle scripts
install (``clusters/software/<version>/scripts/geniac_agent.py``), run for real in a thread of the endpoint's process.

HyperPod nodes are not SSM ``SendCommand`` targets (the endpoint refuses them as AWS does), so the portal reaches a
HyperPod controller through this agent (docs/DECISIONS.md 42). Here the agent polls the portal (a test's live
server, the demo's web server) with the cluster's token, and the commands it builds run on the emulated Slurm of
its cluster (:func:`sandbox.aws.moto_headnode.run`, the handlers SSM's emulation uses) instead of a subprocess:
only where its commands run differs from the controller's. :func:`start` runs one agent per cluster (a second start
replaces the first); an agent stops when its cluster leaves the endpoint (a reset) or with :func:`stop`.
"""
from __future__ import annotations

import importlib.util
import logging
import shlex
import tempfile
import threading
import time
from functools import cache
from types import ModuleType
from typing import Any

from clusters.software import release
from sandbox.aws import moto_headnode

logger = logging.getLogger(__name__)
CONTROLLER = "controller"  # the instance id the emulated commands see
_agents: dict[tuple[str, str, str], tuple[threading.Thread, threading.Event, Any]] = {}
_lock = threading.Lock()


@cache
def program(version: str = release.CURRENT_VERSION) -> ModuleType:
    """The agent program of the software stack ``version``, loaded from its file."""
    path = release.SOFTWARE_DIR / version / "scripts" / "geniac_agent.py"
    spec = importlib.util.spec_from_file_location(f"geniac_agent_{version.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runner(account: str, region: str, cluster_name: str):
    """Run the agent's argv on the cluster's emulated Slurm: the line as the shell would see it, stdin as a
    heredoc (``sbatch``'s job script); a command that emulates a duration takes it."""

    def run(argv: list[str], stdin: str = "", timeout: float = 60) -> tuple[int, str, str]:
        cluster = moto_headnode.cluster_of(account, region, f"sagemaker-cluster:{cluster_name}_{CONTROLLER}")
        if cluster is None:
            return 1, "", f"{argv[0]}: error: Unable to contact slurm controller (connect failure)\n"
        line = shlex.join(argv)
        if stdin:
            line = f"{line} <<'GENIAC_JOB'\n{stdin.rstrip()}\nGENIAC_JOB"
        result = moto_headnode.run(moto_headnode.Context(region, account, CONTROLLER, cluster, line))
        if result.seconds:
            time.sleep(min(result.seconds, timeout))
        return result.exit_status, result.stdout, result.stderr

    return run


def _exists(account: str, region: str, cluster_name: str) -> bool:
    return moto_headnode.cluster_of(account, region, f"sagemaker-cluster:{cluster_name}_{CONTROLLER}") is not None


def _serve(key: tuple[str, str, str], agent: Any, stop: threading.Event) -> None:
    account, region, cluster_name = key
    pause = 0.5
    while not stop.is_set() and _exists(account, region, cluster_name):
        try:
            agent.once()
            pause = 0.5
        except (OSError, ValueError) as exc:  # the portal is not up (yet) or answered an error: as the program does
            logger.debug("agent of %s: %s", cluster_name, exc)
            stop.wait(pause)
            pause = min(pause * 2, 5)
    with _lock:
        if _agents.get(key, (None,))[0] is threading.current_thread():
            del _agents[key]


def start(account: str, region: str, cluster_name: str, *, url: str, cluster_id: int, token: str,
          wait: float = 5.0, state_dir: str = "") -> Any:
    """Run the agent of the HyperPod cluster ``cluster_name`` against the portal at ``url``; answers the agent."""
    stop(account, region, cluster_name)
    module = program()
    agent = module.Agent(url, cluster_id, token, state_dir or tempfile.mkdtemp(prefix="geniac-agent-"),
                         run=runner(account, region, cluster_name), wait=wait, allow_http=True)
    key = (account, region, cluster_name)
    stopping = threading.Event()
    thread = threading.Thread(target=_serve, args=(key, agent, stopping), name=f"geniac-agent-{cluster_name}",
                              daemon=True)
    with _lock:
        _agents[key] = (thread, stopping, agent)
    thread.start()
    return agent


def stop(account: str, region: str, cluster_name: str, timeout: float = 30) -> bool:
    """Stop the cluster's agent (after its current poll); True when one ran."""
    with _lock:
        found = _agents.pop((account, region, cluster_name), None)
    if found is None:
        return False
    thread, stopping, _agent = found
    stopping.set()
    thread.join(timeout)
    return True


def running(account: str, region: str, cluster_name: str) -> bool:
    with _lock:
        found = _agents.get((account, region, cluster_name))
    return found is not None and found[0].is_alive()


def stop_all(timeout: float = 30) -> int:
    """Stop every agent this process runs; answers how many."""
    with _lock:
        keys = list(_agents)
    return sum(stop(*key, timeout=timeout) for key in keys)
