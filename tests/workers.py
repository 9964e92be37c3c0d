"""Real Celery worker processes, started one way: for the ``celery_worker_process`` fixture (tests/conftest.py)
and for the tests that start, kill and replace workers themselves."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portal.core.processes import die_with_parent

ROOT = Path(__file__).resolve().parent.parent
ALL_QUEUES = "default,launches,health,notifications"


def database_url() -> str:
    """The URL of the test database this process is on, for a worker to use the same one."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return (f"postgres://{db['USER']}:{db.get('PASSWORD') or ''}@{db['HOST'] or '127.0.0.1'}:"
            f"{db['PORT'] or 5432}/{db['NAME']}")


def worker_env(aws_url: str | None, extra: dict | None = None) -> dict:
    """This process's environment pointed at its test database, its Redis database and the embedded endpoint."""
    from django.conf import settings

    env = dict(os.environ)
    env.update(DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="portal.settings.test",
               REDIS_URL=settings.REDIS_URL, CELERY_BROKER_URL=settings.REDIS_URL, AWS_ENDPOINT_URL=aws_url or "",
               **(extra or {}))
    return env


def start_worker(name: str, *, env: dict, log: Path, queues: str = ALL_QUEUES, concurrency: int = 2,
                 timeout: float = 60) -> subprocess.Popen:
    """A ``celery worker`` in a process group of its own (so a signal to the group reaches its pool's children)
    that dies with this process; returned once it answers a ping by its own name."""
    from portal.celery import app

    hostname = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", queues, "--concurrency", str(concurrency),
             "--pool", "prefork", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "--hostname", f"{hostname}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited early; see {log}")
        if any(hostname in host for reply in (app.control.ping(timeout=0.5) or []) for host in reply):
            return proc
    stop_worker(proc, 9)
    pytest.fail(f"no worker answered within {timeout:.0f} s; see {log}")


def stop_worker(proc: subprocess.Popen, sig: int = 15) -> None:
    """Signal the worker's group (``sig``, SIGTERM by default) and wait; SIGKILL if it has not gone in 20 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)
