"""Data-migration tests: on a copy of the test database, roll back to a migration, write rows with its historical
models and migrate forward to the one under test. The copy is dropped when the test ends, even halfway, so the
test database stays at the latest migrations without migrating forward again (tests/databases.py)."""
from __future__ import annotations

from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.databases import scratch_copy


@contextmanager
def rolled_back_to(target: list[tuple[str, str]]):
    """A copy of the database at ``target`` (e.g. ``[("review", "0003_interaction_tallies")]``); yields that
    state's apps. Inside the block the default connection is on the copy."""
    with scratch_copy():
        executor = MigrationExecutor(connection)
        executor.migrate(target)
        yield executor.loader.project_state(target).apps


def migrate(target: list[tuple[str, str]]):
    """Apply (or unapply) migrations up to ``target``; the apps of that state (the tables of other apps may be
    behind the current models there, so read them through these, not the models)."""
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    return executor.loader.project_state(target).apps
