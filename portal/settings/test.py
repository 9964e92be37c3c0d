"""Test settings: fast hashing, in-memory e-mail; database and broker from the environment.

Without ``REDIS_URL`` the tests use an in-memory broker, unless a Redis answers on 127.0.0.1:6379:
then the worker tests run against it (database 15, kept apart from the demo's).

Under pytest-xdist (``make test`` runs it by default) each worker process ``gwK`` gets its own Redis database
(``REDIS_URL``'s database plus K, or 15 minus K without ``REDIS_URL``) and its own files under ``var/test/gwK/``;
pytest-django gives it its own test database (name suffixed ``_gwK``). See docs/DEVELOPING.md, "Tests".
"""
import os
import re
import socket


def _redis_reachable(host: str = "127.0.0.1", port: int = 6379) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


# "gw0", "gw1", ... in an xdist worker process (xdist sets it before the settings load); None in a serial run.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER") or None


def worker_redis_url(url: str, index: int, default_db: int | None = None) -> str:
    """``url`` moved to the Redis database its xdist worker owns: the URL's database plus ``index`` (or
    ``default_db`` minus ``index`` when the URL came from the default). Redis has 16 databases (0-15)."""
    match = re.fullmatch(r"(redis://[^/]*)(?:/(\d*))?", url)
    if match is None or not index:
        return url
    base = int(match.group(2) or 0)
    db = default_db - index if default_db is not None else base + index
    if not 0 <= db <= 15:
        raise RuntimeError(
            f"xdist worker gw{index} would use Redis database {db} (REDIS_URL {url}): Redis has 0-15. "
            "Give REDIS_URL a lower database or run fewer workers (-n).")
    return f"{match.group(1)}/{db}"


DEFAULT_TEST_REDIS = "redis://127.0.0.1:6379/15"


def move_redis_env(environ, worker: str | None, reachable=_redis_reachable) -> None:
    """Point this process's Redis URLs at its worker's database, once per process: a process the tests start (a
    Celery worker) inherits the environment already moved. Without ``REDIS_URL`` the default database is used,
    counting down per worker; the pytest-xdist controller loads these settings first and its workers inherit what
    it wrote, so the flag ``PORTAL_TEST_REDIS_DEFAULT`` tells a worker the URL is still the default."""
    me = worker or "main"
    moved_for = environ.get("PORTAL_TEST_REDIS_MOVED_FOR")
    if moved_for == me or (moved_for and worker is None):
        return  # moved already: by this process, or by the test process that started this one
    index = int(worker[2:]) if worker else 0
    if not environ.get("REDIS_URL") or environ.get("PORTAL_TEST_REDIS_DEFAULT") == "1":
        if reachable():
            environ["REDIS_URL"] = worker_redis_url(DEFAULT_TEST_REDIS, index, default_db=15)
            environ["PORTAL_TEST_REDIS_DEFAULT"] = "1"
    else:
        environ["REDIS_URL"] = worker_redis_url(environ["REDIS_URL"], index)
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        if environ.get(name, "").startswith("redis://"):
            environ[name] = worker_redis_url(environ[name], index)
    environ["PORTAL_TEST_REDIS_MOVED_FOR"] = me


move_redis_env(os.environ, XDIST_WORKER)

from .base import *  # noqa: F403
from .base import INSTALLED_APPS, REDIS_URL, REST_FRAMEWORK, env

DEBUG = False
# The tests run the embedded AWS endpoint and seed the demo program (the development package).
INSTALLED_APPS = [*INSTALLED_APPS, "sandbox"]
# The worker tests read a task's result (they ask for it with ignore_result=False), so they need a result
# store; the portal itself reads none and runs without one.
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL or None)
AXES_FAILURE_LIMIT = 5
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {
        "anon": "100000/min",
        "user": "100000/min",
        "ingest": "100000/min",
        "token": "100000/min",
    },
}
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
SECRET_KEY = env("SECRET_KEY", default="test-only-secret-key-not-for-production-use-0123456789")

# What the tests write under var/ goes to a directory of the xdist worker's own (var/test/gwK/, var/test/main/
# in a serial run), so parallel workers never share a file.
TEST_VAR_DIR = VAR_DIR / "test" / (XDIST_WORKER or "main")  # noqa: F405
TEST_VAR_DIR.mkdir(parents=True, exist_ok=True)
HEALTH_PUSH_DIR = env("HEALTH_PUSH_DIR", default=str(TEST_VAR_DIR / "health-pushes"))

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not memory, so a real worker process can share the test database (pytest-django adds the
    # xdist worker's suffix to the name: test.sqlite3_gw0).
    DATABASES["default"]["TEST"] = {"NAME": str(TEST_VAR_DIR / "test.sqlite3")}  # noqa: F405
# Remediation tests act on one node again at once (a policy with no cool-down); the floor's own tests set it.
REMEDIATION_MIN_COOLDOWN_HOURS = env.int("REMEDIATION_MIN_COOLDOWN_HOURS", default=0)
# The controller agent's long poll answers within a second or two here (tests wait for it).
AGENT_POLL_SECONDS = env.int("AGENT_POLL_SECONDS", default=2)
