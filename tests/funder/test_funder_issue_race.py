"""Two program managers issuing the same draft at once issue one version (the report's row lock and the
compare-and-set on its status): both get the same content hash, the history holds one issue."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from portal.core.models import User
from portal.review.funder.models import FunderReport
from tests.funder.conftest import draft, seed_period


@pytest.mark.django_db(transaction=True)
def test_two_program_managers_issuing_at_once_issue_one_version(world):
    from tests.concurrency import race

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time (CI runs this on PostgreSQL)")
    seed_period(world)
    report = draft(world)
    other_pm = User.objects.create(username="pm2", is_program_manager=True)
    clients = []
    for user in (world.pm, other_pm):
        client = Client()
        client.force_login(user)
        clients.append(client)
    url = reverse("funder:report_issue", kwargs={"pk": report.pk})
    codes = race(2, lambda i: clients[i].post(url).status_code)
    assert codes == [302, 302], codes
    issued = FunderReport.objects.get(pk=report.pk)
    assert issued.status == "issued" and issued.content_hash
    assert issued.history.filter(status="issued").count() == 1
    assert FunderReport.objects.count() == 1
