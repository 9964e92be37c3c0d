"""The test databases (tests/databases.py): a pytest-xdist process runs on a copy of the template the run migrated
once, and a data-migration test's copy never changes the test database it was copied from."""
import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from portal.core.models import Organization
from tests.databases import scratch_copy
from tests.factories import OrganizationFactory
from tests.migrations import migrate, rolled_back_to


def _exists(name: str) -> bool:
    if connection.vendor == "sqlite":
        return Path(name).exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone() is not None


def _fully_migrated() -> bool:
    leaves = set(MigrationExecutor(connection).loader.graph.leaf_nodes())
    return leaves <= set(MigrationRecorder(connection).applied_migrations())


@pytest.mark.django_db
def test_this_process_runs_on_its_own_copy_of_the_runs_template():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        pytest.skip("a serial run migrates its test database itself")
    name = connection.settings_dict["NAME"]
    assert name.endswith(f"_{worker}") and _fully_migrated()
    run, template = (Path(settings.VAR_DIR) / "test" / "template.run").read_text().split(" ", 1)
    assert run == os.environ["PYTEST_XDIST_TESTRUNUID"] and template != name and _exists(template)


@pytest.mark.django_db(transaction=True)
def test_a_scratch_copy_starts_as_the_database_and_changes_only_itself():
    kept = OrganizationFactory(slug="kept")
    original = connection.settings_dict["NAME"]
    with scratch_copy():
        scratch = connection.settings_dict["NAME"]
        assert scratch != original
        assert list(Organization.objects.values_list("slug", flat=True)) == ["kept"]
        Organization.objects.filter(pk=kept.pk).delete()
        OrganizationFactory(slug="only-in-the-copy")
    assert connection.settings_dict["NAME"] == original and not _exists(scratch)
    assert list(Organization.objects.values_list("slug", flat=True)) == ["kept"]


@pytest.mark.django_db(transaction=True)
def test_a_migration_test_that_fails_halfway_leaves_the_database_at_the_latest_migrations():
    original = connection.settings_dict["NAME"]
    # The admin's latest migration: nothing depends on it, so the round trip is one table (seconds, not tens).
    with pytest.raises(AssertionError, match="halfway"), rolled_back_to([("admin", "0002_logentry_remove_auto_add")]):
        scratch = connection.settings_dict["NAME"]
        assert not _fully_migrated()
        migrate([("admin", "0003_logentry_add_action_flag_choices")])
        migrate([("admin", "0002_logentry_remove_auto_add")])
        raise AssertionError("halfway")
    assert connection.settings_dict["NAME"] == original and not _exists(scratch)
    assert _fully_migrated()

