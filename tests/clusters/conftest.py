"""Fixtures of the launch pipeline tests."""
import pytest

from portal.processes import die_with_parent

DOWN = "redis://127.0.0.1:1/0"


class _Broker:
    """Switches the Celery app's broker to a port nothing listens on, and back."""

    def __init__(self, app):
        self.app = app
        self.saved = (app.conf.broker_url, app.conf.get("broker_write_url"))

    def _set(self, url, write_url):
        self.app.conf.broker_url = url
        self.app.conf.broker_write_url = write_url
        self.app._pool = None
        self.app.amqp._producer_pool = None

    def down(self):
        self._set(DOWN, DOWN)

    def restore(self):
        self._set(*self.saved)


@pytest.fixture
def unreachable_broker():
    """The broker is unreachable until the test calls ``restore()``."""
    from portal.celery import app

    broker = _Broker(app)
    broker.down()
    yield broker
    broker.restore()


def start_worker(aws_url: str, name: str, extra_env: dict | None = None):
    """A real `celery worker` process on the test broker and database (the shape of
    tests/conftest.py's celery_worker_process), returned once it answers a ping."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from django.conf import settings
    from django.db import connection

    from portal.celery import app
    from tests.conftest import ROOT

    env = dict(os.environ)
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["DATABASE_URL"] = (f"postgres://{db['USER']}:{db.get('PASSWORD') or ''}@{db['HOST'] or '127.0.0.1'}:"
                               f"{db['PORT'] or 5432}/{db['NAME']}")
    env.update(DJANGO_SETTINGS_MODULE="portal.settings.test", REDIS_URL=settings.REDIS_URL,
               CELERY_BROKER_URL=settings.REDIS_URL, AWS_ENDPOINT_URL=aws_url, **(extra_env or {}))
    log = Path(settings.TEST_VAR_DIR) / "celery-worker.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "default,launches", "--concurrency", "2",
             "--pool", "prefork", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "--hostname", f"{name}-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited early; see {log}")
        if any(name in host for reply in (app.control.ping(timeout=0.5) or []) for host in reply):
            return proc
    os.killpg(proc.pid, 9)
    pytest.fail(f"no worker answered within 60 s; see {log}")


def stop_worker(proc, sig: int = 15) -> None:
    import os
    import subprocess

    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


@pytest.fixture
def quotas(world):
    """Organization A's quotas today: 16 × p5.48xlarge and 16 × trn1.32xlarge in ap-northeast-1."""
    from tests.workloads.factories_workloads import InstanceQuotaFactory

    return [InstanceQuotaFactory(organization=world.org_a, instance_type_name=name, count=16, region="ap-northeast-1")
            for name in ("p5.48xlarge", "trn1.32xlarge")]
