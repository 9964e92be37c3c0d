"""Two program managers awarding the same call at once (real threads, each with its own PostgreSQL connection):
one award goes through, the other is refused, and each awarded line has one quota and one reservation request."""
from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from clusters.accounting.models import ReservationRequest
from portal.core.models import User
from tests.calls.conftest import line
from tests.concurrency import race, signed_in
from workloads.models import InstanceQuota


@pytest.mark.django_db(transaction=True)
def test_two_program_managers_awarding_at_once_make_one_request_per_line(world, program, aws):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time (CI runs this on PostgreSQL)")
    a = program.apply(world.org_a, world.customer_a, [line(8), line(4, instance_type="trn1.32xlarge")])
    b = program.apply(world.org_b, world.customer_b, [line(8)])
    other_pm = User.objects.create(username="pm2", is_program_manager=True)
    clients = signed_in(world.pm, 1, api=True) + signed_in(other_pm, 1, api=True)
    url = reverse("calls-api:call-award", kwargs={"pk": program.call.pk})
    body = {"decisions": {str(a.pk): [line(8), line(4, instance_type="trn1.32xlarge")], str(b.pk): [line(8)]}}
    answers = race(2, lambda i: clients[i].post(url, body, format="json"))
    codes = sorted(r.status_code if hasattr(r, "status_code") else repr(r) for r in answers)
    assert codes == [200, 409], codes
    assert ReservationRequest.objects.count() == 3 and InstanceQuota.objects.count() == 3
    assert sorted(ReservationRequest.objects.values_list("award_key", flat=True)) == sorted(
        [f"calls.application:{a.pk}:0", f"calls.application:{a.pk}:1", f"calls.application:{b.pk}:0"])
