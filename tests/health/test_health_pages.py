"""Health pages: the cluster dashboard, the program panel, the ingestion settings; API reads."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthConfig, GpuFault
from clusters.models import Cluster
from tests.conftest import MARKER_A
from tests.health.factories_health import ClusterFactory, GpuFaultFactory, sample
from tests.queries import assert_flat_queries

XID79 = "dcgm_p5_xid79_missing_gpu.prom"


def _two_node_scrape() -> str:
    healthy = "\n".join(line for line in sample("dcgm_p5_healthy.prom").splitlines() if not line.startswith("#"))
    return sample(XID79) + healthy.replace("ip-10-1-45-12", "ip-10-1-45-01") + "\n"


def test_cluster_health_page_shows_panels_nodes_by_severity_and_faults(client, world, cluster):
    services.ingest(cluster, _two_node_scrape(), "push")
    services.ingest(cluster, _two_node_scrape(), "push")
    client.force_login(world.customer_a)
    response = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk}))
    html = response.content.decode()
    assert response.status_code == 200
    for label in ("Uncorrectable remapped rows", "Correctable remapped rows", "GPUs with XID errors",
                  "Row remap failures", "Thermal violations", "GPUs missing from nvidia-smi"):
        assert label in html
    nodes = re.findall(r"<tr><td class=\"hostname\">(ip-[\d-]+)</td><td><span class=\"badge badge-(\w+)\"", html)
    assert nodes == [("ip-10-1-45-13", "reboot"), ("ip-10-1-45-01", "healthy")]
    assert "reboot the node; replace it if it recurs" in html and "Open faults (2)" in html
    assert 'id="health-trend-data"' in html and "<script>" not in html
    assert "Ingestion settings" not in html  # customers never see the token page


def test_customer_of_another_organization_gets_404(client, world, cluster):
    services.ingest(cluster, sample(XID79).replace("ip-10-1-45-13", MARKER_A), "push")
    client.force_login(world.customer_b)
    assert client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).status_code == 404
    for name in ("health-api:healthreport-list", "health-api:gpufault-list", "health-api:nodehealth-list"):
        response = client.get(reverse(name))
        assert response.json()["count"] == 0 and MARKER_A not in response.content.decode()


def test_cluster_page_query_count(client, world, cluster):
    services.ingest(cluster, _two_node_scrape(), "push")
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})

    def grow(n):
        for _ in range(n):
            GpuFaultFactory(cluster=cluster, hostname=f"ip-10-2-0-{GpuFault.objects.count()}")

    client.force_login(world.lead_a)
    # + the push jobs listed, + what the user may do (validate, configure)
    assert_flat_queries(client, url, grow=grow, sizes=(2, 12), at_most=18)
    assert "Open faults (14)" in client.get(url).content.decode()


def test_program_panel_query_count_and_order(client, world):
    def grow(n):
        for _ in range(n):
            i = Cluster.objects.count()
            c = ClusterFactory(organization=world.org_a if i % 2 else world.org_b, name=f"c-{i}")
            services.ingest(c, sample(XID79 if i == 0 else "dcgm_p5_healthy.prom"), "push")

    client.force_login(world.pm)
    assert_flat_queries(client, reverse("health:program_health"), grow=grow, sizes=(1, 6), at_most=14)
    html = client.get(reverse("health:program_health")).content.decode()
    names = re.findall(r'/health/">(c-\d+)</a>', html)
    assert len(names) == 6 and names[0] == "c-0"  # the cluster with a node to reboot comes first


def test_program_panel_roles(client, world, cluster):
    services.ingest(cluster, sample(XID79), "push")
    client.force_login(world.customer_a)
    assert client.get(reverse("health:program_health")).status_code == 403
    client.force_login(world.lead_b)
    html = client.get(reverse("health:program_health")).content.decode()
    assert "alpha-train" not in html and MARKER_A not in html
    client.force_login(world.lead_a)
    assert "alpha-train" in client.get(reverse("health:program_health")).content.decode()


def test_settings_token_shown_once_and_secret_write_only(client, world, cluster):
    client.force_login(world.lead_a)
    response = client.post(reverse("health:rotate_token", kwargs={"pk": cluster.pk}), follow=True)
    token = re.search(r"<code>(gh\d+\.[\w-]+)</code>", response.content.decode()).group(1)
    assert services.config_for_token(token).cluster == cluster
    page = client.get(reverse("health:cluster_health_settings", kwargs={"pk": cluster.pk})).content.decode()
    assert token not in page and token[:10] in page
    url = reverse("health:cluster_health_settings", kwargs={"pk": cluster.pk})
    response = client.post(url, {"pull_enabled": "on", "pull_url": "https://prom.example/", "auth_kind": "bearer",
                                 "secret": "s3cret-value", "username": "", "aws_region": ""})
    assert response.status_code == 302
    assert "s3cret-value" not in client.get(url).content.decode()
    response = client.post(url, {"pull_enabled": "on", "pull_url": "https://prom.example/", "auth_kind": "bearer",
                                 "secret": "", "username": "", "aws_region": ""})
    assert response.status_code == 302  # a blank secret keeps the stored one
    assert ClusterHealthConfig.objects.get(cluster=cluster).secret == "s3cret-value"
    response = client.post(url, {"pull_enabled": "on", "pull_url": "", "auth_kind": "sigv4", "aws_region": "mars-1"})
    assert response.status_code == 200 and "AMP workspace" in response.content.decode()


def test_rotation_confirms_then_redirects_and_a_refresh_never_rotates_again(client, world, cluster):
    first = services.rotate_token(cluster)
    client.force_login(world.lead_a)
    url = reverse("health:rotate_token", kwargs={"pk": cluster.pk})
    settings_url = reverse("health:cluster_health_settings", kwargs={"pk": cluster.pk})
    assert f'href="{url}"' in client.get(settings_url).content.decode()  # a link to the confirmation, not a POST
    confirm = client.get(url)
    assert confirm.status_code == 200 and "stops working at once" in confirm.content.decode()
    assert services.config_for_token(first) is not None  # asking is not rotating
    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == settings_url
    assert services.config_for_token(first) is None
    shown = client.get(settings_url)
    assert "no-cache" in shown["Cache-Control"] or "no-store" in shown["Cache-Control"]
    token = re.search(r"<code>(gh\d+\.[\w-]+)</code>", shown.content.decode()).group(1)
    refreshed = client.get(settings_url).content.decode()  # the browser's refresh repeats the GET
    assert token not in refreshed
    assert services.config_for_token(token).cluster == cluster  # the token shown still works


def test_customers_and_pms_cannot_rotate_tokens(client, world, cluster):
    for user in (world.customer_a, world.pm):
        client.force_login(user)
        assert client.post(reverse("health:rotate_token", kwargs={"pk": cluster.pk})).status_code == 403
        assert client.post(reverse("health-api:rotate-token", kwargs={"cluster_id": cluster.pk})).status_code == 403
    assert not ClusterHealthConfig.objects.filter(cluster=cluster).exclude(token_hash="").exists()
    client.force_login(world.lead_a)
    response = client.post(reverse("health-api:rotate-token", kwargs={"cluster_id": cluster.pk}))
    assert response.status_code == 201 and response.json()["token"].startswith(f"gh{cluster.pk}.")


@pytest.mark.parametrize("n", [1, 7])
def test_report_and_fault_api_counts(client, world, cluster, n):
    """Query counts: tests/health/test_health_views.py."""
    for _ in range(n):
        services.ingest(cluster, sample(XID79), "push")
    for _ in range(n):
        GpuFaultFactory(cluster=cluster)
    client.force_login(world.customer_a)
    for name in ("health-api:healthreport-list", "health-api:gpufault-list"):
        response = client.get(reverse(name))
        assert response.json()["count"] == n + (2 if name == "health-api:gpufault-list" else 0)
    latest = cluster.health_reports.order_by("-received_at").first()
    detail = client.get(reverse("health-api:healthreport-detail", kwargs={"pk": latest.pk}))
    assert detail.json()["summary"]["panels"]["xid_errors"] == 1
    open_faults = client.get(reverse("health-api:gpufault-list") + "?open=true").json()
    assert open_faults["count"] == n + 2


def test_schema_lists_health_routes(client, world):
    client.force_login(world.staff)
    schema = client.get(reverse("api-schema")).content.decode()
    for path in ("/api/health/reports/", "/api/health/faults/", "/api/health/validation-runs/",
                 "/api/health/clusters/{cluster_id}/metrics/", "/api/health/clusters/{cluster_id}/rotate-token/"):
        assert path in schema


def test_the_open_filter_takes_true_or_false_and_refuses_anything_else(client, world, cluster):
    GpuFaultFactory(cluster=cluster)
    GpuFaultFactory(cluster=cluster, cleared_at=cluster.created)
    client.force_login(world.customer_a)
    url = reverse("health-api:gpufault-list")
    counts = {value: client.get(url, {"open": value}).json()["count"] for value in ("true", "false", "1", "0", "")}
    assert counts == {"true": 1, "false": 1, "1": 1, "0": 1, "": 2}
    refused = client.get(url, {"open": "banana"})
    assert refused.status_code == 400 and "open" in refused.json()


def test_a_fault_under_remediation_is_marked_and_linked_to_its_action_with_flat_queries(client, world):
    from clusters.remediation import services as remediation
    from clusters.remediation.models import RemediationFault
    from tests.remediation.factories_remediation import faulty_report

    cluster = ClusterFactory(organization=world.org_a, name="alpha-fix", orchestrator="parallelcluster", state="ready")
    faulty_report(cluster)
    fault = GpuFault.objects.filter(cluster=cluster).first()
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    client.force_login(world.lead_a)
    assert "remediating (action" not in client.get(url).content.decode()
    action, _ = remediation.propose(cluster, kind="reboot", nodes=[fault.hostname], actor=world.lead_a)
    assert RemediationFault.objects.filter(action=action, fault=fault, outcome="remediating").exists(), action.state
    for role in ("lead_a", "customer_a"):  # the customer sees their organization's action too
        client.force_login(world.users()[role])
        html = client.get(url).content.decode()
        assert f'href="/remediation/{action.pk}/"' in html and f"remediating (action #{action.pk})" in html, role
    RemediationFault.objects.filter(action=action).update(outcome="returned")
    assert "remediating (action" not in client.get(url).content.decode()

    def grow(n):  # more faults, each under an action of its own
        for _ in range(n):
            extra = GpuFaultFactory(cluster=cluster, hostname=f"ip-10-3-0-{GpuFault.objects.count()}")
            RemediationFault.objects.create(action=action, fault=extra)

    client.force_login(world.lead_a)
    assert_flat_queries(client, url, grow=grow, sizes=(2, 12), at_most=20)
    remediating = RemediationFault.objects.filter(action=action, outcome="remediating").count()
    assert remediating >= 12
    assert client.get(url).content.decode().count(f"remediating (action #{action.pk})") == remediating


def test_the_cluster_health_page_has_no_duplicate_ids(client, world, cluster):
    """The validation start form and the results upload form both have a "nodes" field: each keeps its own id,
    so a label points at its own control."""
    services.ingest(cluster, _two_node_scrape(), "push")
    client.force_login(world.lead_a)
    html = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()
    page = html
    # The page as it stands once htmx has loaded its two panels (each has a form with a "nodes" field).
    for name in ("health:validationjob_panel", "remediation:cluster_panel"):
        html += client.get(reverse(name, kwargs={"pk": cluster.pk})).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert "id_start_nodes" in ids and "id_nodes" in ids
    assert sorted({i for i in ids if ids.count(i) > 1}) == []
    for target in re.findall(r'<label for="([^"]+)"', html):
        assert target in ids, target
    # On a phone: a hostname is not broken at its hyphens, and the panels htmx loads keep their place.
    assert '<td class="hostname">ip-10-1-45-13</td>' in page
    assert page.count('class="lazy-panel"') == 2


def test_a_refused_pairwise_sweep_is_shown_in_the_panel_htmx_swaps(client, world, cluster):
    """A cluster without health reports has no nodes to pair: the panel says so with a 200 htmx swaps (it swaps
    no 400, so the page showed nothing); without htmx the refusal is still a 400."""
    from clusters.health.models import ValidationJob

    client.force_login(world.lead_a)
    url = reverse("health:validationjob_add", kwargs={"pk": cluster.pk})
    response = client.post(url, {"pairwise": "on", "collectives": ["all_reduce"]}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and 'role="alert"' in html
    assert "A pairwise sweep needs at least two nodes" in html
    assert client.post(url, {"pairwise": "on"}).status_code == 400
    assert not ValidationJob.objects.filter(cluster=cluster).exists()


def test_the_report_line_reads_as_one_sentence_in_japanese(client, world, cluster):
    """Not "… 基を検出, 98 正常な GPU の割合（%）": the healthy share is part of the sentence."""
    services.ingest(cluster, _two_node_scrape(), "push")
    client.force_login(world.customer_a)
    client.cookies["portal_language"] = "ja"
    html = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()
    assert "正常な GPU は " in html and "正常な GPU の割合（%）" not in html
