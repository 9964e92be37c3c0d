"""Print the database URL `make test` runs on: PostgreSQL whenever one answers, else nothing (SQLite).

`DATABASE_URL`, when set, is used as it is. Otherwise a PostgreSQL on 127.0.0.1:5432 that lets user `postgres` in
without a password (as CI and the development machines have it) is used, so the race tests that need PostgreSQL's
row locks run on a developer's machine too, not only in CI. The database name carries a hash of the checkout's
path: two clones testing at once never share a test database (pytest-django creates `test_<name>_gwK` itself).
`PORTAL_TEST_SQLITE=1` keeps SQLite whatever answers.

Run with the virtual environment's Python before Django starts; it imports only psycopg.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

HOST, PORT, USER = "127.0.0.1", 5432, "postgres"


def postgres_answers() -> bool:
    try:
        import psycopg
    except ImportError:
        return False
    try:
        with psycopg.connect(host=HOST, port=PORT, user=USER, dbname="postgres", connect_timeout=2):
            return True
    except psycopg.Error:
        return False


def database_url(checkout: Path) -> str:
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    if os.environ.get("PORTAL_TEST_SQLITE") == "1" or not postgres_answers():
        return ""
    tag = hashlib.sha256(str(checkout.resolve()).encode()).hexdigest()[:8]
    return f"postgres://{USER}@{HOST}:{PORT}/portal_{tag}"


if __name__ == "__main__":
    sys.stdout.write(database_url(Path(__file__).resolve().parent.parent))
