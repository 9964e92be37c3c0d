"""Cost from Cost Explorer: fetched through the organization's role from the embedded endpoint's queued results."""
from __future__ import annotations

import datetime
import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from django.urls import reverse

from portal.core import aws as portal_aws
from sandbox import spend as demo_spend
from tests.queries import assert_flat_queries
from tests.workloads.factories_workloads import InstanceQuotaFactory
from workloads import spend, tasks
from workloads.models import CostDay, CostFetch

pytestmark = pytest.mark.django_db

START = datetime.date(2026, 11, 1)
END = datetime.date(2026, 11, 4)


def day_result(day: datetime.date, amounts: dict[str, str]) -> dict:
    return {
        "TimePeriod": {"Start": day.isoformat(), "End": (day + datetime.timedelta(days=1)).isoformat()},
        "Total": {},
        "Groups": [{"Keys": [service], "Metrics": {"UnblendedCost": {"Amount": amount, "Unit": "USD"}}}
                   for service, amount in amounts.items()],
        "Estimated": False,
    }


def queue(endpoint: str, account_id: str, *pages: dict) -> None:
    response = requests.post(f"{endpoint}/moto-api/static/ce/cost-and-usage-results",
                             json={"account_id": account_id, "results": list(pages)}, timeout=10)
    assert response.status_code == 201


def test_fetch_stores_days_per_service_across_pages(aws, world):
    org = world.org_a
    day1, day2, day3 = START, START + datetime.timedelta(days=1), START + datetime.timedelta(days=2)
    queue(aws, org.aws_account_id,
          {"ResultsByTime": [day_result(day1, {"Amazon Elastic Compute Cloud - Compute": "2400.50",
                                               "Amazon FSx": "120.25"}),
                             day_result(day2, {"Amazon Elastic Compute Cloud - Compute": "2398.125"})],
           "NextPageToken": "page-2", "DimensionValueAttributes": []},
          # The second page carries the rest of day 2's groups, and day 3.
          {"ResultsByTime": [day_result(day2, {"Amazon Simple Storage Service": "3.5"}),
                             day_result(day3, {})], "DimensionValueAttributes": []})
    # Another organization's account has its own queue: nothing of it reaches A.
    queue(aws, world.org_b.aws_account_id, {"ResultsByTime": [day_result(day1, {"Amazon FSx": "999"})]})

    assert spend.fetch(org.pk, START, END) == 3

    rows = {(r.day, r.service): r.amount_usd for r in CostDay.objects.filter(organization=org)}
    assert rows == {
        (day1, "Amazon Elastic Compute Cloud - Compute"): Decimal("2400.50"),
        (day1, "Amazon FSx"): Decimal("120.25"),
        (day2, "Amazon Elastic Compute Cloud - Compute"): Decimal("2398.125"),
        (day2, "Amazon Simple Storage Service"): Decimal("3.5"),
    }
    fetch = CostFetch.objects.get(organization=org)
    assert (fetch.status, fetch.days, fetch.error) == ("ok", 3, "")
    assert spend.cost_by_organization([org.pk, world.org_b.pk], START, END) == {org.pk: Decimal("4922.375")}
    assert spend.cost_by_organization([org.pk], day2, END) == {org.pk: Decimal("2401.625")}
    assert spend.cost_by_day(org.pk, START, END) == {day1: Decimal("2520.75"), day2: Decimal("2401.625")}
    assert spend.cost_by_service(org.pk, START, END)[0] == ("Amazon Elastic Compute Cloud - Compute", Decimal("4798.625"))


def test_refetch_replaces_reported_days_only(aws, world):
    org = world.org_a
    day1, day2 = START, START + datetime.timedelta(days=1)
    queue(aws, org.aws_account_id, {"ResultsByTime": [day_result(day1, {"Amazon FSx": "10", "AWS Lambda": "1"}),
                                                       day_result(day2, {"Amazon FSx": "20"})]})
    spend.fetch(org.pk, day1, day2 + datetime.timedelta(days=1))
    # Cost Explorer revises day 2 (another request: another queued answer); day 1 is not asked again.
    queue(aws, org.aws_account_id, {"ResultsByTime": [day_result(day2, {"Amazon S3": "5"})]})
    spend.fetch(org.pk, day2, day2 + datetime.timedelta(days=1))
    assert sorted(CostDay.objects.filter(organization=org).values_list("day", "service", "amount_usd")) == [
        (day1, "AWS Lambda", Decimal("1")), (day1, "Amazon FSx", Decimal("10")), (day2, "Amazon S3", Decimal("5"))]


def test_the_request_filters_on_the_linked_account(world):
    params = spend.request(world.org_a, START, END)
    assert params["Filter"] == {"Dimensions": {"Key": "LINKED_ACCOUNT", "Values": [world.org_a.aws_account_id]}}
    assert (params["Granularity"], params["Metrics"], params["GroupBy"]) == (
        "DAILY", ["UnblendedCost"], [{"Type": "DIMENSION", "Key": "SERVICE"}])


class _Throttling(BaseHTTPRequestHandler):
    """An endpoint that throttles the first ``throttle`` Cost Explorer calls, then answers one day."""

    throttle = 0
    calls = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).calls += 1
        if type(self).calls <= type(self).throttle:
            body, status = {"__type": "ThrottlingException", "message": "Rate exceeded"}, 400
        else:
            body, status = {"ResultsByTime": [day_result(START, {"Amazon FSx": "7"})]}, 200
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def throttling_endpoint(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Throttling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_address[1]}"
    portal_aws.clear_credentials()
    _Throttling.calls = 0
    yield _Throttling
    server.shutdown()
    portal_aws.clear_credentials()


@pytest.fixture
def roleless_org(world):
    # The stand-in endpoint has no STS: the organization's calls use the portal's own keys.
    world.org_a.role_arn = ""
    world.org_a.save(update_fields=["role_arn"])
    return world.org_a


def test_throttling_is_retried_with_backoff(throttling_endpoint, roleless_org, settings):
    settings.AWS_MAX_ATTEMPTS = 4
    throttling_endpoint.throttle = 2
    assert spend.fetch(roleless_org.pk, START, END) == 1
    assert throttling_endpoint.calls == 3
    assert CostDay.objects.get(organization=roleless_org).amount_usd == Decimal("7")


def test_throttling_past_the_retries_is_recorded_in_the_portals_words(throttling_endpoint, roleless_org, settings,
                                                                      client, world):
    settings.AWS_MAX_ATTEMPTS = 2
    throttling_endpoint.throttle = 100
    with pytest.raises(portal_aws.AwsError) as raised:
        spend.fetch(roleless_org.pk, START, END)
    assert raised.value.retryable
    fetch = CostFetch.objects.get(organization=roleless_org)
    assert (fetch.status, fetch.failure_reason) == ("failed", "throttling")
    assert "Rate exceeded" in fetch.error
    url = reverse("portal:organization_detail", args=[roleless_org.slug])
    client.force_login(world.customer_a)
    page = client.get(url).content.decode()
    assert "Cost Explorer slowed down" in page and "Rate exceeded" not in page
    client.force_login(world.lead_a)
    assert "Rate exceeded" in client.get(url).content.decode()


def test_the_task_retries_throttling_and_records_only_the_last_failure(throttling_endpoint, roleless_org, settings):
    settings.AWS_MAX_ATTEMPTS = 1  # botocore's count of retries: two calls per run
    throttling_endpoint.throttle = 100
    result = tasks.fetch_costs_task.apply(args=[roleless_org.pk])
    # Eager retries run at once: the first five leave no failure behind, the last one records it.
    assert throttling_endpoint.calls == 2 * (tasks.COST_RETRIES + 1)
    assert result.result == 0
    assert CostFetch.objects.get(organization=roleless_org).failure_reason == "throttling"


def test_access_denied_is_recorded(aws, world):
    # moto's STS lets any role be assumed; an account without an id cannot be filtered on.
    world.org_a.aws_account_id = ""
    world.org_a.role_arn = ""
    world.org_a.save(update_fields=["aws_account_id", "role_arn"])
    with pytest.raises(portal_aws.AwsError):
        spend.fetch(world.org_a.pk, START, END)
    assert CostFetch.objects.get(organization=world.org_a).status == "failed"


def test_organization_page_shows_cost_to_its_members_only(client, world):
    day = datetime.date.today() - datetime.timedelta(days=1)
    spend.store(world.org_a.pk, {day: {"Amazon FSx": Decimal("1234.5")}})
    url = reverse("portal:organization_detail", args=[world.org_a.slug])
    for user in (world.customer_a, world.lead_a, world.pm, world.staff):
        client.force_login(user)
        page = client.get(url).content.decode()
        assert "Cost (Cost Explorer)" in page and "1,234.50" in page, user.username
    for user in (world.customer_b, world.lead_b):
        client.force_login(user)
        assert client.get(url).status_code == 404


def test_demo_cost_follows_the_demos_own_capacity_at_the_regions_prices(aws, world):
    """Two P5 reserved in Tokyo for the whole window, held ten days, three held on one of them: the EC2 cost is
    the reservation every hour plus the one instance beyond it On-Demand, and the organization without capacity
    is billed nothing (it was billed a quarter of a million dollars before)."""
    from clusters.accounting.models import OrganizationDay
    from sandbox import costs as demo_costs
    from workloads import prices
    from workloads.models import CapacityReservation

    today = datetime.date.today()
    for org in (world.org_a, world.org_b):
        org.home_region = "ap-northeast-1"
        org.save(update_fields=["home_region"])
    CapacityReservation.objects.create(
        organization=world.org_a, reservation_id="cr-0000000000000demo", instance_type_name="p5.48xlarge", count=2,
        region="ap-northeast-1", availability_zone="ap-northeast-1a", start=today - datetime.timedelta(days=40),
        end=today + datetime.timedelta(days=10))
    InstanceQuotaFactory(organization=world.org_b, instance_type_name="p5.48xlarge", count=16)  # a quota is no cost
    OrganizationDay.objects.bulk_create([
        OrganizationDay(organization=world.org_a, instance_type="p5.48xlarge", day=today - datetime.timedelta(days=d),
                        held=576 if d == 1 else 384, healthy=300, busy=200, measured=300) for d in range(1, 11)])
    demo_costs.seed({"organizations": {"a": world.org_a, "b": world.org_b}})
    start = today - datetime.timedelta(days=demo_spend.WINDOW_DAYS)
    totals = spend.cost_by_organization([world.org_a.pk, world.org_b.pk], start, today)
    assert world.org_b.pk not in totals
    tokyo = prices.on_demand("ap-northeast-1", "p5.48xlarge")
    services = dict(spend.cost_by_service(world.org_a.pk, start, today))
    assert services[demo_spend.EC2] == pytest.approx(28 * 2 * 24 * tokyo + 24 * tokyo)
    fsx_instance_days = 9 * 2 + 3
    assert services[demo_spend.FSX] == pytest.approx(
        prices.storage_day(fsx_instance_days * demo_spend.FSX_GB_PER_INSTANCE, prices.FSX_LUSTRE_GB_MONTH["ap-northeast-1"]),
        abs=Decimal("0.01"))
    assert len(spend.cost_by_day(world.org_a.pk, start, today)) == 28  # the overview's window, every day
    demo_costs.seed({"organizations": {"a": world.org_a}})  # seeding twice changes nothing
    assert spend.cost_by_organization([world.org_a.pk], start, today) == {world.org_a.pk: totals[world.org_a.pk]}


def test_organization_page_queries_do_not_grow_with_cost_rows(client, world):
    client.force_login(world.customer_a)
    added = []

    def grow(n: int) -> None:
        yesterday = datetime.date.today() - datetime.timedelta(days=1)
        for i in range(n):
            added.append(i)
            spend.store(world.org_a.pk, {yesterday - datetime.timedelta(days=len(added) % 13):
                                         {f"Service {len(added)}": Decimal("1.5")}})

    small, large = assert_flat_queries(client, reverse("portal:organization_detail", args=[world.org_a.slug]), grow=grow)
    print(f"organization page: {small} queries at 10 cost rows, {large} at 30")
