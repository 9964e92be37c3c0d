"""Test settings: fast hashing, in-memory e-mail; database and broker from the environment.

Without ``REDIS_URL`` the tests use an in-memory broker, unless a Redis answers on 127.0.0.1:6379:
then the worker tests run against it (database 15, kept apart from the demo's).
"""
import os
import socket


def _redis_reachable(host: str = "127.0.0.1", port: int = 6379) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


if not os.environ.get("REDIS_URL") and _redis_reachable():
    os.environ["REDIS_URL"] = "redis://127.0.0.1:6379/15"

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

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not memory, so a real worker process can share the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}  # noqa: F405
