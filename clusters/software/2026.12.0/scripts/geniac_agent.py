#!/usr/bin/env python3
"""The GENIAC portal's agent on a HyperPod Slurm controller (docs/DECISIONS.md 42 of the portal).

HyperPod nodes are not SSM Run Command targets, so the portal cannot send a command to the controller. This program
(installed by install_agent.sh, run by geniac-agent.service) asks the portal for work instead: it long-polls
``POST <portal>/api/health/clusters/<id>/agent/poll/`` over HTTPS with the cluster's token, runs each item it gets
once and posts the result to ``.../agent/items/<item id>/result/``. It opens no port and holds no AWS credentials.

An item is a kind of work, never a shell line: the agent builds the command itself from the item's payload
(``sbatch`` of a job script, ``scancel``/``sacct`` of a job id, ``scontrol`` drain, resume or reboot of node names,
Slurm's node listing, the software versions) and runs it without a shell. Each item id is written to the state
directory before the command runs and its result after, so a restarted agent posts a result it already has and
never runs an item twice (one it was running when it stopped is answered as not run).

Standard library only (python3 of the node's image). Settings from the environment (``/etc/geniac/agent.env``):
GENIAC_PORTAL_URL, GENIAC_CLUSTER_ID, GENIAC_AGENT_TOKEN_FILE (default /etc/geniac/agent.token),
GENIAC_AGENT_STATE_DIR (default /var/lib/geniac-agent), GENIAC_AGENT_WAIT (seconds a poll waits, default 20).
"""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

VERSION = "1.0.0"
COMMAND_TIMEOUT = 120  # seconds one command may run (sbatch, scontrol and sinfo answer in a few)
OUTPUT_LIMIT = 200_000  # characters of each stream posted back
KEEP_DAYS = 14  # how long the ids of answered items are kept
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a Slurm node name
_JOB = re.compile(r"^\d{1,12}$")
SACCT_FORMAT = "JobID,State,ExitCode,Reason"
VERSION_COMMANDS = (
    ("slurm", ["sinfo", "--version"]),
    ("kernel", ["uname", "-r"]),
    ("nvidia_driver", ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
    ("neuron", ["neuron-ls", "--version"]),
)

log = logging.getLogger("geniac-agent")

# A runner runs argv (no shell) with stdin, answering (exit status, stdout, stderr).
Runner = Callable[[list[str], str, float], tuple[int, str, str]]


class Refused(ValueError):
    """An item the agent will not run (unknown kind, a payload it cannot build a safe command from)."""


def run_command(argv: list[str], stdin: str = "", timeout: float = COMMAND_TIMEOUT) -> tuple[int, str, str]:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: command not found\n"
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]}: no answer within {timeout:.0f} s\n"
    return done.returncode, done.stdout, done.stderr


def _names(payload: dict) -> list[str]:
    names = payload.get("nodelist") if "nodelist" in payload else payload.get("nodes")
    if not isinstance(names, list) or not all(isinstance(n, str) and _NAME.match(n) for n in names):
        raise Refused("the node names are not Slurm node names")
    return names


def _job(payload: dict) -> str:
    job = str(payload.get("job", ""))
    if not _JOB.match(job):
        raise Refused("not a Slurm job id")
    return job


def _reason(payload: dict) -> str:
    reason = " ".join(str(payload.get("reason") or "portal remediation").split())[:200]
    return f"portal remediation: {reason}" if not reason.startswith("portal remediation") else reason


def command(item: dict) -> tuple[list[str], str]:
    """(argv, stdin) of an item; ``Refused`` for one the agent does not run."""
    kind, payload = item.get("kind"), item.get("payload") or {}
    if not isinstance(payload, dict):
        raise Refused("the payload is not an object")
    if kind == "nodes":
        return ["sinfo", "--Node", "--noheader", "--format=%N %n %o"], ""
    if kind == "validation":
        action = payload.get("action")
        if action == "sbatch":
            script = payload.get("script")
            if not isinstance(script, str) or not script.startswith("#!"):
                raise Refused("the job script does not start with #!")
            names = _names(payload) if payload.get("nodelist") else []
            argv = ["sbatch", "--parsable"]
            if names:
                argv += [f"--nodes={len(names)}", f"--nodelist={','.join(names)}"]
            return argv, script
        if action == "scancel":
            return ["scancel", _job(payload)], ""
        if action == "sacct":
            return ["sacct", "-j", _job(payload), "-X", "-n", "-P", "-o", SACCT_FORMAT], ""
        raise Refused(f"unknown validation action {action!r}")
    if kind == "scontrol":
        action, names = payload.get("action"), ",".join(_names(payload))
        if not names:
            raise Refused("no node names")
        if action == "drain":
            return ["scontrol", "update", f"nodename={names}", "state=DRAIN", f"reason={_reason(payload)}"], ""
        if action == "resume":
            return ["scontrol", "update", f"nodename={names}", "state=RESUME"], ""
        if action == "reboot":
            return ["scontrol", "reboot", "ASAP", "nextstate=RESUME", f"reason={_reason(payload)}", names], ""
        raise Refused(f"unknown scontrol action {action!r}")
    raise Refused(f"unknown kind of work {kind!r}")


class Agent:
    """One cluster's agent: poll, run each item once, post its result."""

    def __init__(self, portal_url: str, cluster_id: int, token: str, state_dir: str, *, run: Runner = run_command,
                 wait: float = 20.0, allow_http: bool = False):
        if not portal_url.startswith("https://") and not (allow_http and portal_url.startswith("http://")):
            raise ValueError(f"the portal's address must be https: {portal_url!r}")
        self.base = f"{portal_url.rstrip('/')}/api/health/clusters/{int(cluster_id)}/agent/"
        self.token, self.run, self.wait = token, run, wait
        self.state_dir = state_dir
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)

    # --- the portal -------------------------------------------------------------------------------------------
    def _post(self, path: str, body: dict, timeout: float) -> dict:
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST", headers={  # noqa: S310
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
            "User-Agent": f"geniac-agent/{VERSION}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - scheme checked in __init__
            return json.loads(response.read().decode() or "{}")

    def poll(self) -> list[dict]:
        answer = self._post("poll/", {"wait": self.wait, "version": VERSION}, timeout=self.wait + 30)
        return [i for i in answer.get("items", []) if isinstance(i, dict) and isinstance(i.get("id"), int)]

    def post_result(self, item_id: int, result: dict) -> dict:
        return self._post(f"items/{item_id}/result/", result, timeout=30)

    # --- what the agent remembers -----------------------------------------------------------------------------
    def _path(self, item_id: int) -> str:
        return os.path.join(self.state_dir, f"{int(item_id)}.json")

    def remembered(self, item_id: int) -> dict | None:
        try:
            with open(self._path(item_id), encoding="utf-8") as handle:
                return json.load(handle)
        except FileNotFoundError:
            return None
        except ValueError:  # a torn file cannot be: writes are renamed into place; read it as "started"
            return {"state": "started"}

    def remember(self, item_id: int, record: dict) -> None:
        """Write the item's record durably (a temporary file, fsync, rename)."""
        fd, temporary = tempfile.mkstemp(dir=self.state_dir, prefix=".item-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path(item_id))

    def forget_old(self, now: float | None = None) -> None:
        limit = (now or time.time()) - KEEP_DAYS * 86400
        for name in os.listdir(self.state_dir):
            path = os.path.join(self.state_dir, name)
            if name.endswith(".json") and os.path.getmtime(path) < limit:
                os.remove(path)

    # --- one item ---------------------------------------------------------------------------------------------
    def execute(self, item: dict) -> dict:
        """Run the item (once: the record says started before the command runs) and remember its result."""
        item_id = item["id"]
        self.remember(item_id, {"state": "started", "kind": item.get("kind")})
        try:
            if item.get("kind") == "versions":
                found = {}
                for name, argv in VERSION_COMMANDS:
                    status, out, _err = self.run(argv, "", COMMAND_TIMEOUT)
                    found[name] = out.strip().splitlines()[0] if status == 0 and out.strip() else ""
                result = {"exit_status": 0, "stdout": json.dumps(found), "stderr": "", "ran": True}
            else:
                argv, stdin = command(item)
                status, out, err = self.run(argv, stdin, COMMAND_TIMEOUT)
                result = {"exit_status": status, "stdout": out[:OUTPUT_LIMIT], "stderr": err[:OUTPUT_LIMIT], "ran": True}
        except Refused as exc:
            result = {"exit_status": -1, "stdout": "", "stderr": f"geniac-agent {VERSION} refused it: {exc}", "ran": False}
        self.remember(item_id, {"state": "ran", "kind": item.get("kind"), "result": result})
        return result

    def handle(self, item: dict) -> dict:
        """The item's result, posted: run now, or what a run before a restart left (never a second run)."""
        record = self.remembered(item["id"])
        if record is None:
            result = self.execute(item)
        elif record.get("state") == "started":  # stopped while running it: whether it took effect is unknown
            result = {"exit_status": -1, "stdout": "", "ran": False,
                      "stderr": "The agent stopped while running this item; it does not run an item twice."}
            self.remember(item["id"], {"state": "ran", "kind": item.get("kind"), "result": result})
        else:
            result = record["result"]
        self.post_result(item["id"], result)
        self.remember(item["id"], {**(self.remembered(item["id"]) or {}), "posted": True})
        return result

    def once(self) -> int:
        items = self.poll()
        for item in items:
            self.handle(item)
        return len(items)

    def serve(self, stop: threading.Event | None = None, *, end_when_refused: bool = False) -> bool:
        """Poll until ``stop`` is set; an unreachable portal or a refused poll is tried again with backoff.
        ``end_when_refused``: answer False as soon as the portal refuses the token (401), so the service's next
        start reads the token again (a rotation); True when ``stop`` ended it."""
        stop = stop or threading.Event()
        pause = 1.0
        while not stop.is_set():
            try:
                self.once()
                pause = 1.0
            except urllib.error.HTTPError as exc:
                if exc.code == 401 and end_when_refused:
                    log.error("the portal refused this agent's token: stopping, to read the token again at the next start")
                    return False
                log.warning("the portal answered %s; trying again in %.0f s", exc.code, pause)
                stop.wait(pause)
                pause = min(pause * 2, 300)
            except (OSError, ValueError) as exc:
                log.warning("the portal could not be reached (%s); trying again in %.0f s", exc, pause)
                stop.wait(pause)
                pause = min(pause * 2, 300)
            if time.time() % 3600 < self.wait:
                self.forget_old()
        return True


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    token_file = os.environ.get("GENIAC_AGENT_TOKEN_FILE", "/etc/geniac/agent.token")
    try:
        with open(token_file, encoding="utf-8") as handle:
            token = handle.read().strip()
        agent = Agent(os.environ["GENIAC_PORTAL_URL"], int(os.environ["GENIAC_CLUSTER_ID"]), token,
                      os.environ.get("GENIAC_AGENT_STATE_DIR", "/var/lib/geniac-agent"),
                      wait=float(os.environ.get("GENIAC_AGENT_WAIT", "20")))
    except (KeyError, OSError, ValueError) as exc:
        log.error("not configured: %s", exc)
        return 78  # EX_CONFIG: systemd's RestartPreventExitStatus
    log.info("geniac-agent %s polling %s", VERSION, agent.base)
    return 0 if agent.serve(end_when_refused=True) else 75  # EX_TEMPFAIL: systemd starts it again


if __name__ == "__main__":
    sys.exit(main())
