"""A failed action: a node the provider never acted on keeps no cool-down, the faults go back to open, the customer
reads what failed and what happens next, the lead SA finds it on their home page, and a refusal reads once."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.health.faults import links
from clusters.health.models import GpuFault
from clusters.remediation import services
from clusters.remediation.choices import ActionState, FaultOutcome
from clusters.remediation.models import RemediationAction
from portal.core.models import TimelineEntry
from tests.remediation.factories_remediation import (
    FAULTY,
    RemediationPolicyFactory,
    clean_report,
    faulty_report,
    hyperpod_cluster,
)
from tests.remediation.test_remediation import run

STRANGER = "ip-10-1-0-99"  # reported to the portal, unknown to HyperPod


def _remediating(cluster, user) -> set[int]:
    """The faults the health page shows as "remediating (action #n)"."""
    faults = links.with_remediation(GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True), user)
    return {f.pk for f in faults if f.remediating_action}


@pytest.mark.django_db
def test_a_failure_before_the_node_was_touched_hands_the_faults_back_without_a_cooldown(world, aws, client):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", cooldown_hours=24)
    cluster = hyperpod_cluster(world.org_a, nodes=1)
    faulty_report(cluster, STRANGER)
    action, _ = services.propose(cluster, kind="reboot", nodes=[STRANGER], actor=world.lead_a)
    assert _remediating(cluster, world.lead_a)  # while it runs
    action = run(action)
    assert (action.state, action.failure_reason) == (ActionState.FAILED, "node_not_found")
    assert action.progress.get("untouched") is True
    assert set(action.fault_rows.values_list("outcome", flat=True)) == {FaultOutcome.OPEN}
    assert not _remediating(cluster, world.lead_a)

    words = (f"The reboot of {STRANGER} failed: the cluster does not list the node (it may have been replaced "
             "already). The node was not touched: its faults are open again, and your lead SA can propose the "
             "action again now.")
    entry = TimelineEntry.objects.filter(organization=world.org_a, title__endswith=": failed").get()
    assert entry.body == words
    customer = APIClient()
    customer.force_authenticate(world.customer_a)
    assert customer.get(f"/api/health/remediations/{action.pk}/").json()["error"] == words
    client.force_login(world.customer_a)
    page = client.get(action.get_absolute_url()).content.decode()
    assert words in page and "NotFound" not in page and "Refused: Refused" not in page

    client.force_login(world.lead_a)
    home = client.get(reverse("portal:lead_home")).content.decode()
    assert "Failed remediation (7 days)" in home and words in home
    assert home.index("Failed remediation") < home.index("lead-faults-h")  # above the faults: where the lead looks first
    client.force_login(world.lead_b)
    assert words not in client.get(reverse("portal:lead_home")).content.decode()

    again, _ = services.propose(cluster, kind="reboot", nodes=[STRANGER], actor=world.lead_a)
    assert again.state == ActionState.APPROVED, again.refusal  # no cool-down: the node was never touched


@pytest.mark.django_db
def test_a_failure_after_the_node_was_acted_on_keeps_the_cooldown_and_says_so(world, aws, client):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", cooldown_hours=24)
    cluster = hyperpod_cluster(world.org_a)
    faulty_report(cluster)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    RemediationAction.objects.filter(pk=action.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    action = run(action)
    assert (action.state, action.failure_reason) == (ActionState.FAILED, "not_verified")
    assert "untouched" not in action.progress
    assert set(action.fault_rows.values_list("outcome", flat=True)) == {FaultOutcome.OPEN}
    entry = TimelineEntry.objects.filter(organization=world.org_a, title__endswith=": failed").get()
    assert entry.body.endswith("The node may have been acted on: its faults are open again, the portal waits 24 h "
                               "before another action on it, and your lead SA follows up.")
    again, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert again.refused_rule == "cooldown"
    client.force_login(world.lead_a)
    panel = client.get(reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk})).content.decode()
    assert "Refused: the node was remediated too recently" in panel and "Refused: Refused" not in panel
    clean_report(cluster)
