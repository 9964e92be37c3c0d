"""/metrics: who may read it, each family it serves, and that it names no organization.

Counters are process-wide (prometheus_client's default registry in a test process), so each test reads a family
before and after what it does and checks the difference."""
from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from clusters.health.ingest import pushes
from clusters.health.ingest import service as services
from clusters.health.models import HealthPush
from portal.celery import app
from portal.core import aws as portal_aws
from portal.core import notifications
from portal.core.metrics import broker, instruments
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.core.tasks import recover_jobs
from tests.conftest import MARKER_A
from tests.health.factories_health import ClusterFactory, sample

TOKEN = "metrics-test-token"


@pytest.fixture
def on(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []


def scrape(client) -> str:
    response = client.get(reverse("metrics"), HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def samples(text: str, name: str) -> dict[tuple, float]:
    """Every sample called ``name`` (the full sample name, e.g. ``portal_http_requests_total``), by its labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for point in family.samples:
            if point.name == name:
                found[tuple(sorted(point.labels.items()))] = point.value
    return found


def value(text: str, name: str, **labels) -> float:
    return samples(text, name).get(tuple(sorted(labels.items())), 0.0)


def redis_broker() -> bool:
    return broker.client() is not None


# --- who may read it ------------------------------------------------------------------------------------------------

def test_metrics_are_off_until_a_token_or_network_is_set(client, settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_NETWORKS = "", []
    assert client.get(reverse("metrics"), HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_the_token_is_required_and_checked(client, on):
    url = reverse("metrics")
    assert client.get(url).status_code == 403
    assert client.get(url, HTTP_AUTHORIZATION="Bearer wrong-token").status_code == 403
    assert client.get(url, HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 403
    assert client.post(url, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405
    assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def test_an_allowed_network_reads_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    url = reverse("metrics")
    assert client.get(url, REMOTE_ADDR="127.0.0.1").status_code == 403
    assert client.get(url, REMOTE_ADDR="10.1.2.3").status_code == 200
    settings.METRICS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    assert client.get(url).status_code == 200


# --- requests -------------------------------------------------------------------------------------------------------

def test_requests_are_counted_by_url_name_and_status_with_latency(client, world, on):
    before = scrape(client)
    client.force_login(world.customer_a)
    assert client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_b.slug})).status_code == 404
    assert client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug})).status_code == 200
    assert client.get("/no/such/page/").status_code == 404
    after = scrape(client)
    name = "portal:organization_detail"
    for status in ("200", "404"):
        key = {"view": name, "method": "GET", "status": status}
        assert value(after, "portal_http_requests_total", **key) == value(before, "portal_http_requests_total", **key) + 1
    key = {"view": "unmatched", "method": "GET", "status": "404"}
    assert value(after, "portal_http_requests_total", **key) == value(before, "portal_http_requests_total", **key) + 1
    count = "portal_http_request_duration_seconds_count"
    assert value(after, count, view=name) == value(before, count, view=name) + 2
    buckets = samples(after, "portal_http_request_duration_seconds_bucket")
    assert (("le", "0.5"), ("view", name)) in buckets


# --- queues, jobs and the sweep -------------------------------------------------------------------------------------

@pytest.mark.skipif(not redis_broker(), reason="the queue figures are read from a Redis broker; none is configured")
def test_queue_depth_and_the_oldest_message_age_are_read_from_redis(client, on):
    redis_client = broker.client()
    redis_client.delete("notifications")
    try:
        app.send_task("portal.ping", args=["first"], queue="notifications")
        app.send_task("portal.ping", args=["second"], queue="notifications")
        states = {state.name: state for state in broker.queues(["notifications", "launches"], now=time.time() + 600)}
        assert states["notifications"].depth == 2
        assert states["notifications"].oldest_age >= 600  # the first message's stamp, seen ten minutes later
        assert states["launches"].oldest_age is None or states["launches"].depth
        text = scrape(client)
        assert value(text, "portal_celery_queue_depth", queue="notifications") == 2
        assert ("queue", "notifications") in {k[0] for k in samples(text, "portal_celery_queue_oldest_message_age_seconds")}
        assert value(text, "portal_metrics_source_up", source="broker") == 1
    finally:
        redis_client.delete("notifications")


def test_jobs_by_kind_and_state_with_the_oldest_open_age(client, world, on):
    setting = NotificationSetting.objects.create(organization=world.org_a, name=f"#{MARKER_A}",
                                                 slack_webhook_url="https://hooks.slack.com/services/T/B/x")
    old = NotificationDelivery.objects.create(setting=setting, organization=world.org_a, channel="slack",
                                              event_kind="fault", title=MARKER_A)
    NotificationDelivery.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(minutes=20))
    NotificationDelivery.objects.create(setting=setting, organization=world.org_a, channel="email", event_kind="fault",
                                        title=MARKER_A, status=NotificationDelivery.FAILED)
    text = scrape(client)
    assert value(text, "portal_jobs", kind="notification", state="pending") == 1
    assert value(text, "portal_jobs", kind="notification", state="failed") == 1
    assert value(text, "portal_jobs_open", kind="notification") == 1
    assert value(text, "portal_jobs_oldest_open_age_seconds", kind="notification") >= 20 * 60
    assert ("kind", "push") in {k[0] for k in samples(text, "portal_jobs_oldest_open_age_seconds")}
    assert value(text, "portal_metrics_source_up", source="jobs") == 1


@pytest.mark.skipif(not redis_broker(), reason="the sweep's stamp is kept in a Redis broker; none is configured")
def test_the_sweep_stamps_when_it_last_finished(client, on):
    broker.client().delete(broker.STAMP_PREFIX + "sweep_finished")
    assert not samples(scrape(client), "portal_jobs_sweep_last_success_timestamp_seconds")
    recover_jobs()
    stamped = samples(scrape(client), "portal_jobs_sweep_last_success_timestamp_seconds")
    assert list(stamped.values())[0] > 0


# --- pushes ---------------------------------------------------------------------------------------------------------

def test_pushes_per_cluster_their_backlog_and_lag(client, world, on, settings, tmp_path):
    settings.HEALTH_PUSH_STORAGE = "local"
    settings.HEALTH_PUSH_DIR = str(tmp_path / "pushes")
    cluster = ClusterFactory(organization=world.org_a, name=f"train-{MARKER_A.lower()}")
    token = services.rotate_token(cluster)
    before = scrape(client)
    url = reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk})
    for _ in range(2):
        response = client.post(url, data=sample("dcgm_p5_xid79_missing_gpu.prom").encode(), content_type="text/plain",
                               HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 202
    first, second = HealthPush.objects.filter(cluster=cluster).order_by("pk")
    HealthPush.objects.filter(pk=first.pk).update(received_at=timezone.now() - timedelta(minutes=3))
    waiting = scrape(client)
    cid = str(cluster.pk)
    assert value(waiting, "portal_health_pushes_received_total", cluster_id=cid) == (
        value(before, "portal_health_pushes_received_total", cluster_id=cid) + 2)
    assert value(waiting, "portal_health_pushes_unprocessed", cluster_id=cid) == 2
    assert value(waiting, "portal_health_push_oldest_unprocessed_age_seconds", cluster_id=cid) >= 180
    assert value(waiting, "portal_health_push_lag_seconds_max") >= 180
    pushes.process(first.pk)
    pushes.process(second.pk)
    done = scrape(client)
    assert value(done, "portal_health_pushes_unprocessed", cluster_id=cid) == 0
    assert value(done, "portal_health_push_lag_seconds_max") == 0
    assert value(done, "portal_health_pushes_processed_total", cluster_id=cid, status="done") == (
        value(before, "portal_health_pushes_processed_total", cluster_id=cid, status="done") + 2)
    lag = "portal_health_push_lag_seconds_count"
    assert value(done, lag) == value(before, lag) + 2
    # The push accepted three minutes before it was processed sits above the 120 s bucket.
    le_120 = "portal_health_push_lag_seconds_bucket"
    assert value(done, le_120, le="120.0") - value(before, le_120, le="120.0") == 1


# --- deliveries, the outbound guard and AWS -------------------------------------------------------------------------

def test_a_refused_delivery_counts_as_failed_and_as_an_outbound_refusal(client, world, on):
    setting = NotificationSetting.objects.create(organization=world.org_a, name="#ops",
                                                 slack_webhook_url="https://127.0.0.1/hook")
    delivery = NotificationDelivery.objects.create(setting=setting, organization=world.org_a, channel="slack",
                                                   event_kind="fault", title="t", payload={"title": "t"})
    before = scrape(client)
    assert notifications.deliver.apply(args=[delivery.pk]).get() == "failed"
    after = scrape(client)
    key = {"channel": "slack", "outcome": "failed"}
    assert value(after, "portal_notification_deliveries_total", **key) == (
        value(before, "portal_notification_deliveries_total", **key) + 1)
    # Each attempt (the task's own retries, run at once here) was refused by the guard.
    delivery.refresh_from_db()
    assert delivery.attempts > 1
    assert value(after, "portal_outbound_refusals_total", reason="private") == (
        value(before, "portal_outbound_refusals_total", reason="private") + delivery.attempts)
    retry = {"channel": "slack", "outcome": "retry"}
    assert value(after, "portal_notification_deliveries_total", **retry) == (
        value(before, "portal_notification_deliveries_total", **retry) + delivery.attempts - 1)
    assert value(after, "portal_jobs", kind="notification", state="failed") == 1


def test_outbound_reasons_are_fixed_words():
    from portal.core import outbound

    assert instruments.outbound_reason(outbound.PRIVATE) == "private"
    assert instruments.outbound_reason(outbound.UNREACHABLE) == "unreachable"
    assert instruments.outbound_reason("The answer is larger than 10 bytes.") == "too_large"
    assert instruments.outbound_reason("https://evil.example/secret-org") == "scheme"
    assert instruments.outbound_reason("whatever the remote said") == "other"


def test_aws_calls_by_operation_and_error_code(client, aws, on):
    before = scrape(client)
    portal_aws.client("sts").get_caller_identity()
    cloudformation = portal_aws.client("cloudformation")
    with pytest.raises(Exception) as raised:
        cloudformation.describe_stacks(StackName="no-such-stack")
    code = portal_aws.translate(raised.value).code
    after = scrape(client)
    ok = {"service": "sts", "operation": "GetCallerIdentity", "code": ""}
    assert value(after, "portal_aws_calls_total", **ok) == value(before, "portal_aws_calls_total", **ok) + 1
    failed = {"service": "cloudformation", "operation": "DescribeStacks", "code": code}
    assert code and value(after, "portal_aws_calls_total", **failed) >= value(before, "portal_aws_calls_total", **failed) + 1


# --- nothing of any organization --------------------------------------------------------------------------------------

def test_metrics_name_no_organization_only_ids(client, world, on, settings, tmp_path):
    settings.HEALTH_PUSH_STORAGE = "local"
    settings.HEALTH_PUSH_DIR = str(tmp_path / "pushes")
    for org in (world.org_a, world.org_b):
        cluster = ClusterFactory(organization=org, name=f"{org.slug}-{MARKER_A.lower()}", error_message=MARKER_A)
        HealthPush.objects.create(cluster=cluster, body="", scope="full")
        setting = NotificationSetting.objects.create(organization=org, name=f"#{MARKER_A}-{org.name}",
                                                     email_recipients=f"{org.slug}@example.org")
        NotificationDelivery.objects.create(setting=setting, organization=org, channel="email", event_kind="fault",
                                            title=f"{MARKER_A} {org.name}", status=NotificationDelivery.FAILED,
                                            error=f"{org.name} {MARKER_A}")
    client.force_login(world.customer_a)
    client.get(reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug}))
    client.logout()
    text = scrape(client)
    forbidden = {MARKER_A, MARKER_A.lower(), "example.org"}
    for org in (world.org_a, world.org_b):
        forbidden |= {org.name, org.slug, str(org.aws_account_id)} - {""}
    for user in (world.customer_a, world.lead_a, world.pm):
        forbidden |= {user.username, user.email} - {""}
    leaked = sorted(word for word in forbidden if word in text)
    assert not leaked, leaked
    # Every label value is an id, a number, a URL name, an AWS name or a fixed word.
    for family in text_string_to_metric_families(text):
        for point in family.samples:
            for label, label_value in point.labels.items():
                if label == "cluster_id":
                    assert label_value.isdigit()
    assert django_settings.METRICS_TOKEN == TOKEN
