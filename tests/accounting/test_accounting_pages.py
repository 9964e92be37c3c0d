"""Where the accelerator-hours show: the weekly review (page, CSV, API, frozen weeks), the organization page,
the cluster page and the lead home's idle capacity list; queries flat in the number of organizations."""
from __future__ import annotations

import csv
import datetime
import io
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone

from clusters.accounting import forecast, idle, services
from clusters.accounting.compute import HOUR, floor_hour
from clusters.accounting.models import AcceleratorUsage, IdleNotice, OrganizationDay
from clusters.models import Cluster
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.review import exports
from portal.review import figures as review_figures
from portal.review import services as review_services
from tests.accounting.test_accounting_figures import build_history
from tests.clusters.factories_clusters import ClusterFactory
from tests.queries import assert_flat_queries, count_queries, page
from tests.review.factories_review import program
from workloads.models import CapacityReservation, CostDay, InstanceQuota

pytestmark = pytest.mark.django_db

COLUMNS = {"gpu_hours_reserved": 3840.0,  # 20 × 8 GPUs reserved for the whole day
           "gpu_hours_held": 1280.0, "gpu_hours_healthy": 1232.0, "gpu_hours_busy": 739.2}


def with_history(world):
    cluster = build_history(world.org_a)
    services.store(timezone.now() - datetime.timedelta(days=4), timezone.now())
    return cluster


def row_of(figures, org):
    return next(o for o in figures["organizations"] if o["id"] == org.pk)


def test_review_csv_api_and_frozen_week_carry_the_gpu_hours(world, client):
    with_history(world)
    day = timezone.localdate() - datetime.timedelta(days=2)
    CostDay.objects.bulk_create([CostDay(organization=world.org_a, day=day, service=service, amount_usd=amount,
                                         fetched_at=timezone.now())
                                 for service, amount in (("Amazon Elastic Compute Cloud - Compute", Decimal("1400.4")),
                                                         ("Amazon FSx", Decimal("78")))])
    client.force_login(world.pm)
    page = client.get(reverse("review:overview"))
    row = row_of(page.context["figures"], world.org_a)
    for column, value in COLUMNS.items():
        assert row[column] == pytest.approx(value), column
    assert row["goodput"] == pytest.approx(739.2 / 3840, abs=1e-4)
    assert (row["cost_usd"], row["cost_per_busy_gpu_hour"]) == (1478.4, 2.0)  # 1,478.40 USD ÷ 739.2 busy hours
    assert page.context["figures"]["capacity"]["program"]["cost_per_busy_gpu_hour"] == 2.0
    assert row_of(page.context["figures"], world.org_b)["gpu_hours_held"] == 0.0
    assert "Accelerator-hours" in page.content.decode()
    weeks = page.context["figures"]["capacity"]["per_week"]
    assert sum(w["busy"] for w in weeks) == pytest.approx(739.2)
    response = client.get(reverse("review:overview_csv", kwargs={"table": "organizations"}))
    body = b"".join(response.streaming_content).decode().lstrip("\ufeff")
    lines = list(csv.DictReader(io.StringIO(body)))
    first = next(line for line in lines if line["Organization"] == world.org_a.name)
    assert {c: float(first[c]) for c in COLUMNS} == pytest.approx(COLUMNS)
    assert (float(first["cost_usd"]), float(first["cost_per_busy_gpu_hour"])) == (1478.4, 2.0)
    assert client.get(reverse("review:overview_csv", kwargs={"table": "capacity"})).status_code == 200
    api = client.get(reverse("review-api:overview")).json()
    assert row_of(api, world.org_a)["gpu_hours_busy"] == pytest.approx(739.2)
    assert row_of(api, world.org_a)["cost_usd"] == 1478.4
    review = review_services.freeze(world.pm)
    assert row_of(review.figures, world.org_a)["gpu_hours_healthy"] == 1232.0
    assert client.get(reverse("review:review_pdf", kwargs={"pk": review.pk})).status_code == 200


def test_the_customer_sees_their_own_figures_only(world, client):
    cluster = with_history(world)
    client.force_login(world.customer_a)
    body = client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug})).content.decode()
    assert "Capacity used" in body and "1,280.0" in body and "1,232.0" in body and "739.2" in body
    body = client.get(cluster.get_absolute_url()).content.decode()
    assert "Capacity used" in body and "739.2" in body
    client.force_login(world.customer_b)
    body = client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_b.slug})).content.decode()
    assert "739.2" not in body and "No accelerator-hours recorded yet." in body
    assert client.get(cluster.get_absolute_url()).status_code == 404


def idle_cluster(org, hours: int, busy_share: str = "0.05") -> Cluster:
    """A 2-node P5 cluster healthy and ``busy_share`` busy for the last ``hours`` closed hours, reserved."""
    cluster = ClusterFactory(organization=org, name=f"idle-{hours}", node_count=2)
    end = floor_hour(timezone.now())
    AcceleratorUsage.objects.bulk_create([
        AcceleratorUsage(cluster=cluster, organization=org, start=end - (h + 1) * HOUR, held=16, healthy=16,
                         measured=16, busy=16 * Decimal(busy_share), reports=12) for h in range(hours)])
    today = timezone.localdate()
    CapacityReservation.objects.get_or_create(
        organization=org, reservation_id=f"cr-{org.pk:017x}", defaults=dict(
            instance_type_name="p5.48xlarge", count=2, region="ap-northeast-1", availability_zone="ap-northeast-1a",
            start=today - datetime.timedelta(days=3), end=today + datetime.timedelta(days=3)))
    return cluster


def test_idle_capacity_notifies_once_and_is_listed(world, client):
    NotificationSetting.objects.create(name="#program", email_recipients="leads@example.com", min_severity="high",
                                       include_internal=True)
    cluster = idle_cluster(world.org_a, 30)
    idle_cluster(world.org_b, 10)  # not idle long enough
    opened = idle.check()
    assert [n.cluster_id for n in opened] == [cluster.pk]
    notice = IdleNotice.objects.get()
    assert notice.lost == Decimal("456.0000")  # 30 h × (16 - 0.8)
    assert notice.since == floor_hour(timezone.now()) - 30 * HOUR
    assert NotificationDelivery.objects.filter(event_kind="idle_capacity").count() == 1
    assert idle.check() == []  # the next run sends nothing more
    assert NotificationDelivery.objects.filter(event_kind="idle_capacity").count() == 1
    client.force_login(world.lead_a)
    body = client.get(reverse("portal:lead_home")).content.decode()
    assert "Idle capacity" in body and cluster.name in body and "456 accelerator-hours lost" in body
    client.force_login(world.lead_b)
    assert cluster.name not in client.get(reverse("portal:lead_home")).content.decode()
    client.force_login(world.pm)
    idle_rows = client.get(reverse("review:overview")).context["figures"]["capacity"]["idle"]
    assert [r["cluster"] for r in idle_rows] == [cluster.name]
    # Busy again: the notice ends, a later idle stretch would notify again.
    AcceleratorUsage.objects.filter(cluster=cluster, start=floor_hour(timezone.now()) - HOUR).update(busy=10)
    idle.check()
    assert IdleNotice.objects.get().ended is not None


def grow(n: int) -> None:
    """``n`` organizations with clusters, a week of hourly figures each and an idle notice."""
    orgs = program(n, clusters=2, interactions=0, prefix=f"acc{AcceleratorUsage.objects.count()}")
    end = floor_hour(timezone.now())
    clusters = list(Cluster.objects.filter(organization__in=orgs))
    AcceleratorUsage.objects.bulk_create([
        AcceleratorUsage(cluster=c, organization_id=c.organization_id, start=end - (h + 1) * HOUR, held=16,
                         healthy=14, measured=14, busy=7) for c in clusters for h in range(0, 168, 6)])
    IdleNotice.objects.bulk_create([IdleNotice(cluster=c, organization_id=c.organization_id, since=end - 30 * HOUR)
                                    for c in clusters[::2]])
    services.summarize(timezone.localdate() - datetime.timedelta(days=8), timezone.localdate())


def test_overview_queries_do_not_grow_with_organizations(world, client):
    client.force_login(world.pm)
    small, large = assert_flat_queries(client, reverse("review:overview"), grow=grow, sizes=(12, 120))
    print(f"overview with accounting: {small} queries at 12 organizations, {large} at 120")


def test_organization_and_lead_pages_do_not_grow_with_clusters(world, client):
    client.force_login(world.lead_a)

    def more_clusters(n):
        clusters = [ClusterFactory(organization=world.org_a) for _ in range(n)]
        AcceleratorUsage.objects.bulk_create([AcceleratorUsage(
            cluster=c, organization=world.org_a, start=floor_hour(timezone.now()) - HOUR, held=8, healthy=8,
            measured=8, busy=4) for c in clusters])

    assert_flat_queries(client, reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug}),
                        grow=more_clusters, sizes=(3, 12))


def test_forecast_at_the_last_two_weeks_burn(world, client):
    """Busy 8 accelerator-hours an hour for two weeks: by the end, nine days on, 24 days × 192."""
    today = timezone.localdate()
    start, end = today - datetime.timedelta(days=20), today + datetime.timedelta(days=9)
    CapacityReservation.objects.create(
        organization=world.org_a, reservation_id="cr-0000000000000000a", instance_type_name="p5.48xlarge", count=2,
        region="ap-northeast-1", availability_zone="ap-northeast-1a", start=start, end=end)
    InstanceQuota.objects.create(organization=world.org_a, instance_type_name="p5.48xlarge",
                                 region="ap-northeast-1", count=4, start=start, end=end)
    cluster = ClusterFactory(organization=world.org_a, node_count=1)
    first, last = services.midnight(today - datetime.timedelta(days=14)), floor_hour(timezone.now())
    hours = int((last - first) / HOUR)
    AcceleratorUsage.objects.bulk_create([
        AcceleratorUsage(cluster=cluster, organization=world.org_a, start=first + h * HOUR, held=8, healthy=8,
                         measured=8, busy=8) for h in range(hours)])
    services.summarize(today - datetime.timedelta(days=14), today)
    ahead = forecast.forecast([world.org_a.pk])[world.org_a.pk]
    (reservation,), (quota,) = ahead["reservations"], ahead["quotas"]
    assert reservation["allocated"] == 2 * 8 * 30 * 24 and quota["allocated"] == 4 * 8 * 30 * 24
    assert reservation["delivered"] == quota["delivered"] == 8 * hours
    assert reservation["by_end"] == pytest.approx(24 * 192, rel=0.01)
    assert quota["by_end"] == pytest.approx(reservation["by_end"])
    assert ahead["runs_out"] == end.isoformat()
    assert forecast.forecast([world.org_b.pk]) == {}
    client.force_login(world.customer_a)
    body = client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug})).content.decode()
    assert "Forecast at the last two weeks" in body and "cr-0000000000000000a" in body
    client.force_login(world.pm)
    row = row_of(client.get(reverse("review:overview")).context["figures"], world.org_a)
    assert row["forecast"]["runs_out"] == end.isoformat()


def test_forecast_shares_by_instances_counts_from_each_start_and_matches_ml_names(world):
    """Two reservations of one type (3 and 1 instances; the second began 5 days ago, so 6 program days) share the busy hours 3:1,
    each counting from its own start; a SageMaker (``ml.``) cluster's hours count for a trn1 reservation."""
    today = timezone.localdate()
    end = today + datetime.timedelta(days=10)
    for rid, count, days_ago in (("cr-00000000000000001", 3, 30), ("cr-00000000000000002", 1, 5)):
        CapacityReservation.objects.create(
            organization=world.org_a, reservation_id=rid, instance_type_name="p5.48xlarge", count=count,
            region="ap-northeast-1", availability_zone="ap-northeast-1a",
            start=today - datetime.timedelta(days=days_ago), end=end)
    CapacityReservation.objects.create(
        organization=world.org_a, reservation_id="arn:aws:sagemaker:us-east-1:123456789012:training-plan/t",
        kind="training_plan", instance_type_name="trn1.32xlarge", count=2, region="us-east-1",
        availability_zone="us-east-1b", start=today - datetime.timedelta(days=30), end=end)
    from clusters.accounting.models import OrganizationDay
    OrganizationDay.objects.bulk_create(
        [OrganizationDay(organization=world.org_a, instance_type="p5.48xlarge", day=today - datetime.timedelta(days=d),
                         held=100, healthy=100, busy=10) for d in range(20)]
        + [OrganizationDay(organization=world.org_a, instance_type="ml.trn1.32xlarge",
                           day=today - datetime.timedelta(days=d), held=50, healthy=50, busy=4) for d in range(3)]
        + [OrganizationDay(organization=world.org_b, instance_type="p5.48xlarge", day=today, held=9, healthy=9, busy=9)])
    ahead = forecast.forecast(None)
    by_name = {e["name"]: e for e in ahead[world.org_a.pk]["reservations"]}
    assert by_name["cr-00000000000000001"]["delivered"] == 0.75 * 20 * 10
    assert by_name["cr-00000000000000002"]["delivered"] == 0.25 * 6 * 10  # from its start day: 6 days
    assert by_name["arn:aws:sagemaker:us-east-1:123456789012:training-plan/t"]["delivered"] == 12
    assert world.org_b.pk not in ahead  # B has usage but nothing in force


@pytest.mark.parametrize("table", ["capacity", "forecast", "idle"])
def test_capacity_csvs_read_their_figures_only_and_do_not_grow(world, client, table):
    """The capacity, forecast and idle CSVs compute their own table's figures, not the whole overview: the
    queries stay flat from 12 to 120 organizations and are fewer than the overview's."""
    client.force_login(world.pm)
    url = reverse("review:overview_csv", kwargs={"table": table})
    small, large = assert_flat_queries(client, url, grow=grow, sizes=(12, 120))
    overview = count_queries(page(client, reverse("review:overview")))
    assert small < overview / 2, (small, overview)
    print(f"{table} CSV: {small} queries at 12 organizations, {large} at 120 (the overview: {overview})")


def test_capacity_csvs_have_the_overview_tables_rows(world):
    """Each table computed alone has exactly the rows of the same table of the whole overview."""
    with_history(world)
    grow(5)
    IdleNotice.objects.create(cluster=Cluster.objects.filter(organization=world.org_a).first(), organization=world.org_a,
                              since=timezone.now() - 30 * HOUR, notified_at=timezone.now(), lost=Decimal("456"))
    now = timezone.now()
    whole = review_figures.overview(world.pm, now=now)
    for table in review_figures.TABLE_FIGURES:
        alone = exports.table(review_figures.table_figures(world.pm, table, now=now), table)
        assert alone == exports.table(whole, table), table
        assert alone[1], f"the {table} table is empty: the comparison shows nothing"
    lead = review_figures.table_figures(world.lead_b, "forecast", now=now)
    assert {o["name"] for o in lead["organizations"]} == {world.org_b.name}


def test_program_weeks_are_the_sums_of_the_organizations_weeks(world):
    """The program's week-by-week figures, summed in the database per day, equal the organizations' own figures
    of each week added up."""
    with_history(world)
    grow(4)
    now = timezone.now()
    monday = timezone.localdate(now) - datetime.timedelta(days=timezone.localdate(now).weekday())
    mondays = [monday - datetime.timedelta(weeks=k) for k in (2, 1, 0)]
    weeks = services.program_weeks(None, mondays, now)
    assert [w["week"] for w in weeks] == [m.isoformat() for m in mondays]
    for w, m in zip(weeks, mondays, strict=True):
        end = min(now, services.midnight(m + datetime.timedelta(days=7)) - datetime.timedelta(microseconds=1))
        per_org = services.organization_figures(None, services.midnight(m), end)
        expected = services.total(per_org)
        for key in ("reserved", "held", "healthy", "busy", "lost_unheld", "lost_idle"):
            assert w[key] == pytest.approx(expected[key], abs=1e-3), (m, key)
    stored = OrganizationDay.objects.filter(day__gte=mondays[0]).aggregate(busy=Sum("busy"))["busy"]
    assert sum(w["busy"] for w in weeks) == pytest.approx(float(stored)) and stored > 739
    assert weeks[-1]["reserved"] > 0


def test_no_forecast_runs_past_the_capacity_reserved(world):
    """A quota allowed until April while the reservation it runs on ends in ten days: the allocation runs out with
    the reservation, and the quota's "busy by its end" counts the burn of those ten days only."""
    today = timezone.localdate()
    reserved_end, quota_end = today + datetime.timedelta(days=10), today + datetime.timedelta(days=120)
    CapacityReservation.objects.create(
        organization=world.org_a, reservation_id="cr-0000000000000000b", instance_type_name="p5.48xlarge", count=2,
        region="ap-northeast-1", availability_zone="ap-northeast-1a", start=today - datetime.timedelta(days=20),
        end=reserved_end)
    InstanceQuota.objects.create(organization=world.org_a, instance_type_name="p5.48xlarge", region="ap-northeast-1",
                                 count=2, start=today - datetime.timedelta(days=20), end=quota_end)
    OrganizationDay.objects.bulk_create([
        OrganizationDay(organization=world.org_a, instance_type="p5.48xlarge", day=today - datetime.timedelta(days=d),
                        held=384, healthy=384, busy=192, measured=384) for d in range(1, 15)])
    ahead = forecast.forecast([world.org_a.pk], now=services.midnight(today))[world.org_a.pk]
    assert ahead["runs_out"] == reserved_end.isoformat()
    (reservation,), (quota,) = ahead["reservations"], ahead["quotas"]
    # 14 days at 192 busy hours a day delivered; 192 a day more until the reservation's last day (11 days).
    assert reservation["by_end"] == quota["by_end"] == pytest.approx(192 * 14 + 192 * 11, rel=0.01)
