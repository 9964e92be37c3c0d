"""Test databases copied instead of migrated: the migrations run once per test run, not once per process.

Applying every migration costs seconds of CPU (Django renders the project state step by step, and the state-only
moves of the layered apps re-render most models). Under pytest-xdist each process used to migrate its own test
database; now the first process to get here migrates a template database, under a file lock, and every process
copies it (SQLite's backup API, which reads a consistent snapshot whatever the journal mode; PostgreSQL's
``CREATE DATABASE ... TEMPLATE``). Each copy has the name pytest-django gives the process's test database
(``..._gwK``), so nothing else changes. The template is kept until the next run makes its own: a process may
reach its first database test after another has finished.

The data-migration tests use the same copy (:func:`scratch_copy`): they roll a copy back and forward and drop it,
where they used to roll the test database itself back and then migrate it forward to the latest migrations again.
"""
from __future__ import annotations

import fcntl
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connections
from django.test.utils import setup_databases


def copy_database(connection, source: str, target: str) -> None:
    """Make ``target`` a copy of the database ``source`` of ``connection``'s server (replacing it)."""
    connection.close()
    if connection.vendor == "sqlite":
        Path(target).unlink(missing_ok=True)
        with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        src.close()
        dst.close()
        return
    if connection.vendor != "postgresql":
        raise NotImplementedError(f"no database copy for {connection.vendor}")
    name, template = connection.ops.quote_name(target), connection.ops.quote_name(source)
    for attempt in range(10):
        try:
            # Django's own test-database creation connects the same way (to the server's "postgres" database).
            with connection._nodb_cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS {name}")
                cursor.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
            return
        except DatabaseError as error:
            # A template must have no session. The source is this run's template or this process's own test
            # database, so a session on it is a leftover of this process (a thread's connection that an earlier
            # test left open, a killed worker's) or autovacuum's: end them and try again.
            if "being accessed by other users" not in str(error) or attempt == 9:
                raise
            with connection._nodb_cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                               " WHERE datname = %s AND pid <> pg_backend_pid()", [source])
            time.sleep(0.2 * (attempt + 1))


def drop_database(connection, name: str) -> None:
    connection.close()
    if connection.vendor == "sqlite":
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(name + suffix).unlink(missing_ok=True)
        return
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _template_name(connection, planned: str, worker: str) -> str:
    if connection.vendor == "sqlite":  # each process's file is under its own var/test/gwK/; the template is shared
        return str(Path(settings.VAR_DIR) / "test" / "template.sqlite3")
    return planned.removesuffix(f"_{worker}")


def setup_from_template(*, worker: str, run: str, verbosity: int, serialized: bool) -> tuple[str, str]:
    """Give this xdist process its test database as a copy of the run's template (made here if this process is
    the run's first). Returns (the database's name before the tests, the copy's name) for :func:`teardown_copy`."""
    connection = connections["default"]
    original = connection.settings_dict["NAME"]
    test = connection.settings_dict.setdefault("TEST", {})
    planned = test.get("NAME") or f"test_{original}"  # pytest-django's name for this process: ..._gwK
    template = _template_name(connection, planned, worker)
    var = Path(settings.VAR_DIR) / "test"
    marker = var / "template.run"
    with _locked(var / "template.lock"):
        if not marker.exists() or marker.read_text() != f"{run} {template}":
            test["NAME"] = template
            try:
                setup_databases(verbosity=verbosity, interactive=False, aliases={"default"}, serialized_aliases=set())
            finally:
                test["NAME"] = planned
            marker.write_text(f"{run} {template}")
        copy_database(connection, template, planned)
    connection.settings_dict["NAME"] = planned
    if serialized:  # what serialized_rollback restores, read from this process's copy
        connection._test_serialized_contents = connection.creation.serialize_db_to_string()
    return original, planned


def teardown_copy(original: str, copy: str) -> None:
    connection = connections["default"]
    connection.settings_dict["NAME"] = original
    drop_database(connection, copy)


@contextmanager
def scratch_copy():
    """This connection on a copy of its database until the block ends; then back, and the copy dropped."""
    from django.contrib.contenttypes.models import ContentType

    connection = connections["default"]
    original = connection.settings_dict["NAME"]
    scratch = f"{original}.scratch" if connection.vendor == "sqlite" else f"{original}_scratch"
    copy_database(connection, original, scratch)
    connection.settings_dict["NAME"] = scratch
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
        drop_database(connection, scratch)
        ContentType.objects.clear_cache()  # ids read from the copy
