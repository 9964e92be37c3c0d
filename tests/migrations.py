"""Data-migration tests: roll the database back to a migration, write rows with its historical models, migrate
forward to the one under test, and always return to the latest migrations, even when the test fails halfway."""
from __future__ import annotations

from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@contextmanager
def rolled_back_to(target: list[tuple[str, str]]):
    """The database at ``target`` (e.g. ``[("review", "0003_interaction_tallies")]``); yields that state's apps."""
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(target)
        yield executor.loader.project_state(target).apps
    finally:
        latest = MigrationExecutor(connection)
        latest.migrate(latest.loader.graph.leaf_nodes())


def migrate(target: list[tuple[str, str]]) -> None:
    """Apply (or unapply) migrations up to ``target``."""
    MigrationExecutor(connection).migrate(target)
