"""A proposal a guardrail refuses is recorded (and told on the timeline) once per node, kind and rule within the
window: repeats, racing ones too, are counted on that record."""
from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.urls import reverse

from clusters.remediation import services
from clusters.remediation.models import RemediationAction
from portal.core.models import TimelineEntry
from tests import concurrency
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, hyperpod_cluster

pytestmark = pytest.mark.django_db


def _refused_entries(org) -> int:
    return TimelineEntry.objects.filter(organization=org, title__contains="refused").count()


def test_a_refusal_repeated_within_the_window_is_counted_not_recorded_again(world):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    busy, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    answers = [services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a) for _ in range(3)]
    first = answers[0][0]
    assert [created for _a, created in answers] == [True, False, False]
    assert {a.pk for a, _c in answers} == {first.pk} and first.refused_rule == "node_busy"
    assert RemediationAction.objects.get(pk=first.pk).repeats == 2
    assert RemediationAction.objects.filter(state="refused").count() == 1 and _refused_entries(world.org_a) == 1
    other, created = services.propose(cluster, kind="drain", nodes=[FAULTY], actor=world.lead_a)
    assert created and other.refused_rule == "agent_absent"  # another reason is told
    RemediationAction.objects.filter(pk=first.pk).update(
        proposed_at=first.proposed_at - datetime.timedelta(hours=2))
    later, created = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    assert created and later.pk != first.pk  # past the window it is told again
    assert busy.state == "approved"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: SQLite serializes every writer")
@pytest.mark.django_db(transaction=True)
def test_twenty_racing_refused_proposals_make_one_refused_record(world):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)  # holds the node
    clients = concurrency.signed_in(world.lead_a, 20, api=True)
    body = {"cluster": cluster.pk, "nodes": [FAULTY], "kind": "replace"}
    url = reverse("remediation-api:remediationaction-list")
    answers = concurrency.race(20, lambda i: clients[i].post(url, body, format="json"))
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert sorted(a.status_code for a in answers) == [200] * 19 + [201]
    refused = RemediationAction.objects.get(state="refused")
    assert refused.refused_rule == "node_busy" and refused.repeats == 19
    assert {a.json()["id"] for a in answers} == {refused.pk}
    assert _refused_entries(world.org_a) == 1
