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
_worker_index = int(XDIST_WORKER[2:]) if XDIST_WORKER else 0


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


# The environment is rewritten once: processes the tests start (a Celery worker) inherit it already moved.
_moved = os.environ.get("PORTAL_TEST_REDIS_MOVED_FOR") == (XDIST_WORKER or "main")
if not os.environ.get("REDIS_URL") and _redis_reachable():
    os.environ["REDIS_URL"] = worker_redis_url("redis://127.0.0.1:6379/15", _worker_index, default_db=15)
elif os.environ.get("REDIS_URL") and not _moved:
    os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], _worker_index)
for _name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
    if os.environ.get(_name, "").startswith("redis://") and not _moved:
        os.environ[_name] = worker_redis_url(os.environ[_name], _worker_index)
os.environ["PORTAL_TEST_REDIS_MOVED_FOR"] = XDIST_WORKER or "main"

from .base import *  # noqa: F403
from .base import REDIS_URL, REST_FRAMEWORK, env

DEBUG = False
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
