"""Figures from the health app: verdicts, validation, faults per week, the readiness checklist.

They run once the health models are installed (label ``health``)."""
from __future__ import annotations

import datetime
import re

from django.urls import reverse
from django.utils import timezone

from clusters.health.models import ClusterHealthState, GpuFault, HealthReport, ValidationRun
from portal.review import figures
from tests.health.factories_health import ClusterFactory
from tests.queries import assert_flat_queries
from tests.review.factories_review import grow_program


def _fault(cluster, days_ago, *, verdict="reset_gpu", cleared=False, gpu="3"):
    seen = timezone.now() - datetime.timedelta(days=days_ago)
    return GpuFault.objects.create(
        cluster=cluster, hostname="ip-10-0-0-1", gpu=gpu, kind="xid", xid=79, severity="critical", verdict=verdict,
        meaning="GPU has fallen off the bus", action="reboot the node", first_seen=seen, last_seen=seen,
        cleared_at=timezone.now() if cleared else None)


def _report(cluster):
    """A report as ingestion leaves it: the row, and the cluster's current health pointing at it."""
    report = HealthReport.objects.create(cluster=cluster, source="push")
    ClusterHealthState.objects.update_or_create(
        cluster=cluster, defaults={"last_report": report, "last_report_at": report.received_at,
                                   "nodes_known": cluster.node_count, "oldest_seen": report.received_at})
    return report


def _run(cluster, verdict):
    return ValidationRun.objects.create(cluster=cluster, collective="all_reduce", verdict=verdict)


def test_health_and_validation_per_organization(world):
    a1, a2 = ClusterFactory(organization=world.org_a, name="a1"), ClusterFactory(organization=world.org_a, name="a2")
    b1 = ClusterFactory(organization=world.org_b, name="b1")
    _report(a1)
    _report(b1)
    _fault(a1, 1, verdict="reset_gpu")
    _fault(a1, 2, verdict="replace", gpu="4")  # one open fault per GPU and kind
    _fault(a2, 3, cleared=True)
    _fault(b1, 20, cleared=True)
    _run(a1, "pass")
    _run(a1, "fail")
    _run(a2, "fail")
    data = figures.overview(world.pm)
    rows = {o["slug"]: o for o in data["organizations"]}
    assert rows["alpha-labs"]["health"] == "2 open faults (worst: replace node)"
    assert rows["alpha-labs"]["validation"] == "1 of 2 ready clusters validated"
    assert rows["beta-works"]["health"] == "healthy" and rows["beta-works"]["validation"] == "0 of 1 ready cluster validated"
    assert data["totals"]["validated_clusters"] == 1
    weekly = [p["faults"] for p in data["charts"]["faults_per_week"]]
    assert len(weekly) == 12 and sum(weekly) == 4
    lead_view = figures.overview(world.lead_b)
    assert [o["health"] for o in lead_view["organizations"]] == ["healthy"]
    assert lead_view["totals"]["validated_clusters"] == 0


def test_validation_counts_ready_clusters_not_tested_ones(world, client):
    """Two ready clusters, one tested and passed: 1 of 2, and the checklist does not say validated."""
    a1 = ClusterFactory(organization=world.org_a, name="a-tested")
    a2 = ClusterFactory(organization=world.org_a, name="a-untested")
    ClusterFactory(organization=world.org_a, name="a-launching", state="creating")
    _run(a1, "pass")
    rows = {o["slug"]: o for o in figures.overview(world.pm)["organizations"]}
    assert rows["alpha-labs"]["validation"] == "1 of 2 ready clusters validated"
    from clusters.health.validation import readiness

    item = {i.key: i for i in readiness.checklist(world.org_a)}["validation"]
    assert item.ok is False and "a-untested" in item.detail and item.label == "Ready clusters validated"
    _run(a2, "pass")
    item = {i.key: i for i in readiness.checklist(world.org_a)}["validation"]
    assert item.ok is True and "2 of 2" in item.detail
    rows = {o["slug"]: o for o in figures.overview(world.pm)["organizations"]}
    assert rows["alpha-labs"]["validation"] == "2 of 2 ready clusters validated"


def test_status_section_shows_health_validation_and_readiness(world, client):
    a1 = ClusterFactory(organization=world.org_a, name="alpha-train")
    _report(a1)
    _fault(a1, 1, verdict="reboot")
    _run(a1, "pass")
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "1 open fault (worst: reboot node)" in body and "validated" in body
    # The readiness checklist is the health app's section; the status section does not repeat it.
    assert body.count("Cluster ready") == 1


def test_lead_home_lists_new_faults_of_led_organizations(world, client):
    _fault(ClusterFactory(organization=world.org_a, name="alpha-train"), 1)
    _fault(ClusterFactory(organization=world.org_b, name="beta-train"), 1)
    client.force_login(world.lead_a)
    body = client.get(reverse("portal:lead_home")).content.decode()
    section = body.split('id="lead-faults-h"', 1)[1].split("</section>", 1)[0]
    assert "alpha-train" in section and "XID 79" in section and "beta-train" not in section


def test_overview_query_count_with_health(world, client):
    client.force_login(world.pm)
    add_organizations = grow_program(clusters=2)

    def grow(n):
        for org in add_organizations(n):
            cluster = org.clusters.first()
            _report(cluster)
            _fault(cluster, 2)
            _run(cluster, "pass")

    assert_flat_queries(client, reverse("review:overview"), grow=grow, sizes=(12, 120))


def test_customer_landing_page_puts_health_problems_first_and_lists_clusters_once(world, client):
    broken = ClusterFactory(organization=world.org_a, name="alpha-broken")
    fine = ClusterFactory(organization=world.org_a, name="alpha-fine")
    _report(broken)
    _report(fine)
    _fault(broken, 1, verdict="replace")
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    main = body.split('<main', 1)[1]
    headings = [h for h in re.findall(r"<h2[^>]*>([^<]+)<", main) if h.strip() != "Facts"]
    assert headings[0] == "At a glance", headings
    problems = body.split("<h3>Health problems</h3>", 1)[1].split("</div>", 1)[0]
    assert "alpha-broken" in problems and "replace node" in problems and "alpha-fine" not in problems
    assert body.index("Health problems") < body.index("<h3>Clusters</h3>")
    assert body.count(f'href="{fine.get_absolute_url()}"') == 1  # one clusters table, not two
    assert len(headings) == len(set(headings))  # no section twice


def test_faults_per_week_follow_program_weeks_at_their_bounds(world):
    """Each fault counts in the program week (Monday 00:00 program time) it was first seen, also for faults
    opened by ingestion, within the chart's 12 weeks, and only the organizations the user may view."""
    from clusters.health.faults import service as reconcile_faults
    from clusters.health.readers.summary import Fault
    from portal.core.weeks import week_start_of
    from portal.review.figures.scope import at

    a1, b1 = ClusterFactory(organization=world.org_a, name="a1"), ClusterFactory(organization=world.org_b, name="b1")
    monday = week_start_of(timezone.localdate())
    seen = {
        "this monday 00:00": (a1, at(monday)),
        "last sunday 23:59": (a1, at(monday) - datetime.timedelta(minutes=1)),
        "11 weeks ago": (a1, at(monday - datetime.timedelta(weeks=11)) + datetime.timedelta(hours=5)),
        "12 weeks ago": (a1, at(monday - datetime.timedelta(weeks=12)) + datetime.timedelta(hours=5)),
        "b this week": (b1, at(monday) + datetime.timedelta(seconds=1)),
    }
    for k, (cluster, when) in enumerate(seen.values()):
        GpuFault.objects.create(cluster=cluster, hostname=f"ip-{k}", gpu="1", kind="xid", xid=79, severity="critical",
                                verdict="reboot", meaning="m", action="a", first_seen=when, last_seen=when)
    report = HealthReport.objects.create(cluster=a1, source="push")
    reconcile_faults.reconcile(report, [Fault(hostname="ip-new", kind="xid", gpu=2, xid=48, severity="critical",
                                              verdict="replace", meaning="m", action="a")])
    assert GpuFault.objects.get(hostname="ip-new").first_week == monday  # opened now, by ingestion

    def weekly(user):
        data = figures.overview(user)
        return {p["week"]: p["faults"] for p in data["charts"]["faults_per_week"] if p["faults"]}, data["week"]["faults"]

    last_week = (monday - datetime.timedelta(weeks=1)).isoformat()
    eleven = (monday - datetime.timedelta(weeks=11)).isoformat()
    assert weekly(world.pm) == ({monday.isoformat(): 3, last_week: 1, eleven: 1}, 3)
    assert weekly(world.customer_b) == ({monday.isoformat(): 1}, 1)
    # Editing when a fault was first seen moves it to that week.
    moved = GpuFault.objects.get(hostname="ip-1")
    moved.first_seen = at(monday) + datetime.timedelta(hours=1)
    moved.save()
    assert weekly(world.pm)[0].get(last_week) is None


def test_rebuild_command_stores_the_weeks_of_faults_loaded_in_bulk(world):
    from django.core.management import call_command

    from portal.core.weeks import week_of

    cluster = ClusterFactory(organization=world.org_a)
    seen = [timezone.now() - datetime.timedelta(days=d) for d in (1, 8, 15)]
    GpuFault.objects.bulk_create([  # as a restore or a script might: a wrong (or stale) week
        GpuFault(cluster=cluster, hostname=f"ip-{k}", kind="xid", severity="critical", verdict="reboot", meaning="m",
                 action="a", first_seen=when, last_seen=when, first_week=datetime.date(2020, 1, 6))
        for k, when in enumerate(seen)])
    call_command("rebuild_interaction_tallies")
    assert sorted(GpuFault.objects.values_list("first_seen", "first_week")) == sorted((w, week_of(w)) for w in seen)
    weekly = {p["week"]: p["faults"] for p in figures.overview(world.pm)["charts"]["faults_per_week"] if p["faults"]}
    assert sum(weekly.values()) == 3
