"""PostgreSQL drops the portal's connections (a restart, a failover): the next request still works.

Runs against the real PostgreSQL (skipped on SQLite). The web server keeps connections open between
requests (CONN_MAX_AGE) and checks them before use (CONN_HEALTH_CHECKS); the test proves a kept
connection existed, kills it on the server side, and asks again.
"""
import os
import subprocess
import time

import pytest
from django.db import connection, connections


@pytest.fixture
def persistent_connections():
    db = connections.settings["default"]
    previous = db["CONN_MAX_AGE"]
    db["CONN_MAX_AGE"] = 600
    yield
    db["CONN_MAX_AGE"] = previous


def _get(path: str) -> tuple[int, dict]:
    """One request through Django's WSGI handler in this thread, as a gunicorn sync worker serves it:
    request_started/finished run, so kept connections are checked and kept exactly as in production."""
    import io
    import json
    from wsgiref.util import setup_testing_defaults

    from django.core.handlers.wsgi import WSGIHandler

    environ = {"PATH_INFO": path, "REQUEST_METHOD": "GET", "wsgi.input": io.BytesIO(b""), "SERVER_NAME": "testserver"}
    setup_testing_defaults(environ)
    status_holder = {}

    def start_response(status, headers, exc_info=None):
        status_holder["status"] = int(status.split()[0])

    body = b"".join(WSGIHandler()(environ, start_response))
    return status_holder["status"], json.loads(body)


def _kill_backend(pid: int) -> None:
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**{k: v for k, v in params.items() if k in ("dbname", "user", "host", "port", "password")},
                         autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.mark.django_db(transaction=True)
def test_next_request_works_after_the_connection_is_killed(persistent_connections):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    connection.close()
    status, body = _get("/healthz")
    assert status == 200 and body["status"] != "down"
    pid = connection.connection.info.backend_pid  # the kept connection
    _kill_backend(pid)
    status, body = _get("/healthz")
    assert status == 200 and body["status"] != "down", body
    assert connection.connection.info.backend_pid != pid


@pytest.mark.serial  # every other test process loses its connections
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(os.environ.get("CI") != "true", reason="restarts the machine's PostgreSQL: CI only")
def test_next_request_works_after_postgresql_restarts(persistent_connections):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    connection.close()
    assert _get("/healthz")[0] == 200
    version = os.listdir("/etc/postgresql")[0]
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True, timeout=120)
    for _ in range(60):
        if subprocess.run(["pg_isready", "-h", "127.0.0.1", "-q"]).returncode == 0:
            break
        time.sleep(0.5)
    status, body = _get("/healthz")
    assert status == 200 and body["status"] != "down", body
