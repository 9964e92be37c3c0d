"""One source for a fault's advice: the XID table's words on the fault, the node's verdict and the remediation
panel's recommendation read the same (XID 79: reboot the node, replace it if it recurs)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.health.models import GpuFault, NodeHealth
from clusters.health.readers import xid
from clusters.remediation import rules
from tests.remediation.factories_remediation import FAULTY, hyperpod_cluster

pytestmark = pytest.mark.django_db


def test_xid_79_reads_the_same_on_the_fault_the_node_and_the_remediation_panel(world, client):
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    fault = GpuFault.objects.get(cluster=cluster, kind="xid", xid=79)
    entry = xid.describe(79)
    node = NodeHealth.objects.get(cluster=cluster, hostname=FAULTY)
    assert fault.action == entry.action and node.verdict == fault.verdict == "reboot"
    assert rules.recommend(fault) == "reboot"  # the table's first step, not "replace"
    client.force_login(world.lead_a)
    panel = client.get(reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk})).content.decode()
    at = panel.index("(XID 79)")
    row = panel[panel.rindex("<tr>", 0, at):panel.index("</tr>", at)]
    assert entry.action in row and ">replace<" not in row
    assert "(recommended: reboot)" in panel


def test_what_an_action_does_and_how_long_it_takes_read_in_japanese(world, client):
    """Not "所要時間は 10 to 30 minutes です": the description and the duration are translated, while the
    action's journal keeps its stored text in English."""
    import datetime

    from django.utils import translation

    from portal.core.templatetags.portal_markdown import duration

    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    client.force_login(world.lead_a)
    client.cookies["portal_language"] = "ja"
    panel = client.get(reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk}),
                       headers={"Accept-Language": "ja"}).content.decode()
    assert "minutes" not in panel and "15～45 分" in panel
    with translation.override("ja"):
        assert duration(datetime.timedelta(minutes=5)) == "5分"
        assert duration(datetime.timedelta(days=2, minutes=5)) == "2日0時間"
    with translation.override("en"):
        assert duration(datetime.timedelta(minutes=5)) == "5 min"


def _as_action(consequence: str) -> str:
    return {xid.REPLACE_NODE: "replace", xid.REBOOT_NODE: "reboot", xid.RESET_GPU: "reboot"}[consequence]


def test_every_shipped_automatic_xid_rule_takes_the_xid_tables_first_step():
    """The automatic rules name the action the XID table gives (XID 79: reboot, not replace)."""
    from clusters.remediation.choices import AUTOMATIC_RULES

    for key, (_label, kind) in AUTOMATIC_RULES.items():
        if key.startswith("xid_"):
            assert kind == _as_action(xid.describe(int(key[4:])).consequence), key


def test_automatic_xid_79_reboots_first_and_replaces_when_it_recurs_on_the_node(world):
    from django.utils import timezone

    from clusters.remediation import services
    from clusters.remediation.models import RemediationAction
    from tests.remediation.factories_remediation import RemediationPolicyFactory

    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"], max_nodes=3)
    first = hyperpod_cluster(world.org_a, in_endpoint=False)
    assert services.propose_automatic() == 1
    assert RemediationAction.objects.get(cluster=first).kind == "reboot"

    again = hyperpod_cluster(world.org_a, name="hp-again", in_endpoint=False)
    fault = GpuFault.objects.get(cluster=again, kind="xid", xid=79)
    earlier = GpuFault.objects.get(pk=fault.pk)
    earlier.pk, earlier.first_seen, earlier.cleared_at = None, fault.first_seen - timezone.timedelta(days=2), \
        fault.first_seen - timezone.timedelta(days=1)
    earlier.save()
    assert rules.automatic_kind(fault) == "replace"
    assert services.propose_automatic() == 1
    assert RemediationAction.objects.get(cluster=again).kind == "replace"


def test_the_journal_written_during_a_japanese_request_is_one_language(world):
    """Not "Remediation 1 on hp-fix: 交換 of ip-… proposed automatically": the stored English lines carry the
    kind and the rule in English, whatever language the request that wrote them was in."""
    from django.utils import translation

    from clusters.remediation import services
    from portal.core.models import TimelineEntry
    from tests.remediation.factories_remediation import RemediationPolicyFactory

    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"])
    hyperpod_cluster(world.org_a, in_endpoint=False)
    with translation.override("ja"):
        assert services.propose_automatic() == 1
    titles = " ".join(TimelineEntry.objects.values_list("title", flat=True))
    bodies = " ".join(TimelineEntry.objects.values_list("body", flat=True))
    assert "reboot of ip-10-1-0-10 proposed automatically" in titles
    assert "再起動" not in titles and "GPU がバスから脱落" not in titles + bodies
