"""Fixtures shared by every test: two organizations, a user for every role, the embedded AWS
endpoint (one moto server per test session, reset between tests) and a real Celery worker."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_SESSION_TOKEN", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "ap-northeast-1")

from portal.processes import die_with_parent  # noqa: E402
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# Every object of organization A carries this marker in a text field, so a test can assert that a
# page or export shown to someone else never contains it.
MARKER_A = "ZZ-ORG-A-SECRET"


@dataclass
class World:
    org_a: object
    org_b: object
    customer_a: object
    customer_b: object
    lead_a: object
    lead_b: object
    pm: object
    staff: object

    def users(self) -> dict:
        return {
            "customer_a": self.customer_a,
            "customer_b": self.customer_b,
            "lead_a": self.lead_a,
            "lead_b": self.lead_b,
            "pm": self.pm,
            "staff": self.staff,
        }


@pytest.fixture
def world(db) -> World:
    """Organization A and B; a customer and a lead SA of each; a program manager; a staff user."""
    return build_world()


def build_world() -> World:
    """The ``world`` fixture's rows, for fixtures of a wider scope (inside their own transaction)."""
    org_a = OrganizationFactory(name=f"Alpha Labs {MARKER_A}", slug="alpha-labs", description=MARKER_A)
    org_b = OrganizationFactory(name="Beta Works", slug="beta-works")
    customer_a = MembershipFactory(user=UserFactory(username="customer_a"), organization=org_a, role="customer").user
    customer_b = MembershipFactory(user=UserFactory(username="customer_b"), organization=org_b, role="customer").user
    lead_a = MembershipFactory(user=UserFactory(username="lead_a"), organization=org_a, role="lead_sa").user
    lead_b = MembershipFactory(user=UserFactory(username="lead_b"), organization=org_b, role="lead_sa").user
    pm = UserFactory(username="pm", is_program_manager=True)
    staff = UserFactory(username="staff", is_staff=True)
    return World(org_a, org_b, customer_a, customer_b, lead_a, lead_b, pm, staff)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def aws_server():
    """One embedded AWS endpoint (moto's server, with the portal's extra resource types) per session."""
    try:
        from clusters.aws.embedded import start_server
    except ImportError:
        start_server = None
    if start_server is not None:
        server, url = start_server()
    else:
        from moto.server import ThreadedMotoServer

        port = _free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        url = f"http://127.0.0.1:{port}"
    yield url
    server.stop()


@pytest.fixture
def aws(aws_server, settings):
    """The embedded endpoint, empty, with the portal's client factory pointed at it."""
    import requests

    from portal import aws as portal_aws

    requests.post(f"{aws_server}/moto-api/reset", timeout=10)
    settings.AWS_ENDPOINT_URL = aws_server
    portal_aws.clear_credentials()
    yield aws_server
    portal_aws.clear_credentials()


def redis_url() -> str | None:
    from django.conf import settings

    url = settings.REDIS_URL
    return url or None


@pytest.fixture
def celery_worker_process(transactional_db, aws, settings):
    """A real `celery worker` process consuming the test broker (Redis) and the test database."""
    import redis as redis_lib
    from django.db import connection

    url = redis_url()
    if not url:
        pytest.skip("Redis is not reachable")
    redis_lib.Redis.from_url(url).flushdb()
    env = dict(os.environ)
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["DATABASE_URL"] = (
            f"postgres://{db['USER']}:{db.get('PASSWORD') or ''}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
    env.update(
        DJANGO_SETTINGS_MODULE="portal.settings.test",
        REDIS_URL=url,
        CELERY_BROKER_URL=url,
        AWS_ENDPOINT_URL=aws,
    )
    log = ROOT / "var" / "test-worker.log"
    log.parent.mkdir(exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "default,launches,health,notifications",
             "--concurrency", "2", "--pool", "prefork", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "--hostname", f"test-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
        )
    from portal.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited early; see {log}")
        if app.control.ping(timeout=0.5):
            break
    else:
        proc.kill()
        pytest.fail(f"no worker answered within 60 s; see {log}")
    yield proc
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)


@pytest.fixture
def outbound_allows_local(settings, monkeypatch):
    """Let the guarded outbound client (portal/outbound.py) call 127.0.0.1 over http, for a listener a
    test starts there. The defaults refuse it; the environment carries it to a worker started later."""
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.OUTBOUND_HTTP_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("OUTBOUND_ALLOWED_HOSTS", "127.0.0.1")
    monkeypatch.setenv("OUTBOUND_HTTP_HOSTS", "127.0.0.1")
