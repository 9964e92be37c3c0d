"""The demo holds an open call for the next cycle with three applications (a pre-filled draft, a submitted and
scored one, an awarded one whose quotas the next cycle start carries in)."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from clusters.accounting.models import ReservationRequest
from portal.core.models import User
from portal.engagement import cycles
from portal.engagement.calls.models import Application, Call
from sandbox.calls import TITLE
from workloads.models import InstanceQuota

pytestmark = pytest.mark.world_per_test


def test_the_demo_call_has_a_draft_a_submitted_and_an_awarded_application(db):
    call_command("seed_demo")
    call_command("seed_demo")
    call = Call.objects.get(title=TITLE)
    assert call.status == "open"
    statuses = dict(Application.objects.filter(call=call).values_list("organization__slug", "status"))
    assert statuses == {"kotoba-labs": "draft", "mirai-code": "submitted", "shirakawa-ai": "awarded"}
    draft = Application.objects.get(call=call, organization__slug="kotoba-labs")
    assert draft.record["cycle"] == "GENIAC Cycle 3" and draft.record["workload"]
    submitted = Application.objects.get(call=call, organization__slug="mirai-code")
    assert submitted.versions.count() == 1 and submitted.assignments.filter(submitted_at__isnull=False).count() == 2
    quota = InstanceQuota.objects.get(organization__slug="shirakawa-ai", notes__startswith="Awarded by")
    assert (quota.count, quota.start, quota.cycle) == (24, call.next_cycle_starts_on, call.cycle)

    continuing = list(cycles.active().participations.values_list("organization_id", flat=True))
    nxt = cycles.start_next(User.objects.get(username="pm"), continuing=continuing,
                            starts_on=call.next_cycle_starts_on, today=call.next_cycle_starts_on)
    quota.refresh_from_db()
    assert quota.cycle_id == nxt.pk
    request = ReservationRequest.objects.get(organization__slug="shirakawa-ai")  # seeded twice: one request
    assert (request.count, request.start, request.quota_id, request.cycle_id) == (24, call.next_cycle_starts_on,
                                                                                  quota.pk, nxt.pk)
