"""One source for a fault's advice: the XID table's words on the fault, the node's verdict and the remediation
panel's recommendation read the same (XID 79: reboot the node, replace it if it recurs)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.health import xid
from clusters.health.models import GpuFault, NodeHealth
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

    from portal.templatetags.portal_markdown import duration

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
