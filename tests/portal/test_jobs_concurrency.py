"""The job base's claim under concurrent claims (PostgreSQL: SQLite lets one writer in at a time)."""
from __future__ import annotations

import pytest
from django.db import connection

from clusters.models import LaunchJob
from tests.clusters.factories_clusters import ClusterFactory
from tests.concurrency import race

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def postgres_only(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time, so claims cannot race")


def test_one_of_many_concurrent_claims_takes_the_lease(world):
    job = LaunchJob.objects.create(cluster=ClusterFactory(organization=world.org_a, name="claimed"), attempts=1)
    results = race(8, lambda i: LaunchJob.claim(job.pk, attempt=1))
    assert sorted(results) == [False] * 7 + [True]


def test_a_send_number_taken_concurrently_is_unique(world):
    job = LaunchJob.objects.create(cluster=ClusterFactory(organization=world.org_a, name="numbered"))
    numbers = race(6, lambda i: LaunchJob.number(job.pk))
    assert sorted(numbers) == [1, 2, 3, 4, 5, 6]
    job.refresh_from_db()
    assert job.attempts == 6
