"""Automatic remediation starts from the fault's announcement, not from the next minute's sweep: a new critical
health fault of an organization under automatic consent sends the proposal task at once."""
from __future__ import annotations

import json

import pytest

from clusters.remediation import tasks
from clusters.remediation.models import RemediationAction
from portal.core.metrics import broker
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, hyperpod_cluster

pytestmark = pytest.mark.skipif(broker.client() is None, reason="reads the sent task from a Redis broker; none is configured")


def _sent(queue: str = "default") -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in broker.client().lrange(queue, 0, -1)]


@pytest.mark.django_db
def test_a_new_fault_under_automatic_consent_sends_the_proposal_at_once(world, django_capture_on_commit_callbacks):
    broker.client().delete("default")
    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"])
    with django_capture_on_commit_callbacks(execute=True):
        hyperpod_cluster(world.org_a, in_endpoint=False)  # ingests an XID 79 report: the fault is announced
    assert _sent().count("remediation.propose_automatic") == 1
    assert tasks.propose_automatic() == 1  # what the worker runs on that message
    action = RemediationAction.objects.get()
    assert (action.automatic, action.nodes, action.state) == (True, [FAULTY], "approved")
    broker.client().delete("default")


@pytest.mark.django_db
def test_without_automatic_consent_nothing_is_sent(world, django_capture_on_commit_callbacks):
    broker.client().delete("default")
    RemediationPolicyFactory(organization=world.org_a, mode="approval")
    with django_capture_on_commit_callbacks(execute=True):
        hyperpod_cluster(world.org_a, in_endpoint=False)
    assert "remediation.propose_automatic" not in _sent()
    assert not RemediationAction.objects.exists()
