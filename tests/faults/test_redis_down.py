"""Redis stops: every request that sends a task answers at once, as when the broker alone is down.

Redis is the broker, the place a result store would live and the push rate limit's counter. A private
``redis-server`` on a free port plays all three; the test stops it and calls each sender through a live
server with a client that gives up after ``CLIENT_TIMEOUT`` seconds (2 s asked, plus slack for a busy
machine). The answer must be the ordinary one with the "queued" wording, and the row must be kept for the
sweep, which sends it once Redis is back.
"""
from __future__ import annotations

import json
import secrets
import shutil
import threading
import time
from urllib.parse import urlencode

import pytest
import redis as redis_lib
import requests
from django.test import Client
from django.urls import reverse
from slack_sdk.signature import SignatureVerifier

from clusters.choices import ClusterJobKind, ClusterState
from clusters.health.ingest import pushes
from clusters.health.ingest import service as services
from clusters.health.models import HealthPush
from clusters.models import Cluster
from portal.celery import app
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.engagement.models import SlackCapture
from tests.clusters.factories_clusters import launched_cluster, ready_cluster
from tests.engagement.conftest import SECRET, TEAM, linked, slack_api  # noqa: F401 - fixtures
from tests.faults.test_broker_down import PrivateRedis
from tests.health.factories_health import ClusterFactory, sample
from tests.interactions.factories_interactions import InteractionFactory
from tests.workloads.factories_workloads import InstanceQuotaFactory

pytestmark = pytest.mark.django_db(transaction=True)  # senders send after commit: real commits
CLIENT_TIMEOUT = 3.0  # seconds: the 2 s bound plus slack
CASE_ID = "case-123456789012-2026-0123456789abcdef"


def point_celery_at(broker: str | None, backend: str | None) -> None:
    """Point the Celery app at ``broker`` and ``backend`` and drop every cached connection and backend
    (the backend is cached per thread, the live server's threads included)."""
    app.conf.broker_url = broker
    app.conf.broker_write_url = None
    app.conf.result_backend = backend
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None
    app._local = threading.local()


@pytest.fixture
def redis(settings):
    """A private Redis as the broker, as a result store (an operator may configure one) and as the push
    rate limit's counter. Stopped and started by the test."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis()
    server.start()
    saved = (app.conf.broker_url, app.conf.result_backend)
    settings.REDIS_URL = server.url
    settings.HEALTH_PUSH_RATE = "1000/min"  # counted in the private Redis
    point_celery_at(server.url, server.url)
    yield server
    server.stop()
    point_celery_at(*saved)


def restart(server: PrivateRedis) -> None:
    server.start()
    point_celery_at(server.url, server.url)


class Browser:
    """A signed-in user's requests to the live server, each bounded by the client's timeout."""

    def __init__(self, live_server, user=None):
        self.base = live_server.url
        self.http = requests.Session()
        csrf = secrets.token_hex(16)  # an unmasked 32-character token: the cookie and the header agree
        self.http.cookies.set("csrftoken", csrf)
        self.http.headers["X-CSRFToken"] = csrf
        self.http.get(self.base + "/", timeout=30, allow_redirects=False)  # warm: URLs and middleware loaded
        if user is not None:
            django_client = Client()
            django_client.force_login(user)
            self.http.cookies.set("sessionid", django_client.cookies["sessionid"].value)

    def post(self, path: str, **kwargs) -> tuple[requests.Response, float]:
        """POST, not following a redirect; answers the response and the seconds it took. A request still
        unanswered after CLIENT_TIMEOUT fails the test (the client gives up)."""
        started = time.monotonic()
        try:
            response = self.http.post(self.base + path, timeout=(1.0, CLIENT_TIMEOUT), allow_redirects=False, **kwargs)
        except requests.Timeout:
            pytest.fail(f"POST {path} gave no answer within {CLIENT_TIMEOUT} s while Redis was down")
        return response, time.monotonic() - started

    def page(self, response: requests.Response) -> str:
        """The page a POST redirected to (where its message is shown)."""
        assert response.status_code == 302, response.text[:500]
        return self.http.get(self.base + response.headers["Location"], timeout=10).text


def test_a_health_push_is_accepted_and_sent_by_the_sweep_once_redis_is_back(live_server, world, redis):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-train")
    token = services.rotate_token(cluster)
    redis.stop()
    response, took = Browser(live_server).post(
        reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}), data=sample("dcgm_p5_healthy.prom").encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
    print(f"push: {took:.2f} s")
    assert response.status_code == 202, response.text[:500]
    assert response.json()["status"] == "pending"  # accepted, waiting for a worker
    push = HealthPush.objects.get()
    assert push.status == "pending" and push.dispatched_at is None  # kept for the sweep
    assert pushes.recover() == 0  # still down: nothing sent
    restart(redis)
    assert pushes.recover() == 1
    assert redis_lib.Redis.from_url(redis.url).llen("health") == 1  # on its queue
    assert HealthPush.objects.get().dispatched_at is not None


def _launch_body(org) -> dict:
    return {"organization": org.slug, "name": "trn-run", "blueprint": "hyperpod", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"}, "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"WorkerInstanceType": "ml.trn1.32xlarge", "WorkerCount": "4"}}}


def _launch_form(org) -> dict:
    return {"organization": org.pk, "name": "p5-train", "region": "ap-northeast-1", "full_stack": "on",
            "network__AvailabilityZone": "ap-northeast-1a", "storage__LustreStorageCapacity": "2400",
            "storage__LustreThroughputPerTiB": "250", "storage__CreateHomeFileSystem": "true",
            "storage__HomeStorageCapacity": "512", "storage__HomeThroughputCapacity": "64",
            "cluster__ComputeInstanceType": "p5.48xlarge", "cluster__ComputeMinCount": "0",
            "cluster__ComputeMaxCount": "4", "cluster__CapacityType": "ONDEMAND", "cluster__Os": "alinux2023",
            "cluster__HeadNodeInstanceType": "m5.8xlarge", "cluster__QueueName": "compute"}


@pytest.fixture
def quotas(world):
    return [InstanceQuotaFactory(organization=world.org_a, instance_type_name=name, count=16, region="ap-northeast-1")
            for name in ("p5.48xlarge", "trn1.32xlarge")]


def test_an_api_launch_is_saved_as_scheduled_and_sent_by_the_sweep_once_redis_is_back(live_server, world, quotas,
                                                                                      redis):
    from clusters.tasks import sweep_launch_jobs

    redis.stop()
    response, took = Browser(live_server, world.lead_a).post(
        reverse("clusters-api:cluster-list"), data=json.dumps(_launch_body(world.org_a)),
        headers={"Content-Type": "application/json"})
    print(f"launch (API): {took:.2f} s")
    assert response.status_code == 202, response.text[:500]
    body = response.json()
    assert body["dispatched"] is False and "will be sent when it is back" in body["message"]
    cluster = Cluster.objects.get(name="trn-run")
    job = cluster.jobs.get()
    assert cluster.state == ClusterState.SCHEDULED and not job.dispatched
    assert sweep_launch_jobs() == 0  # still down
    restart(redis)
    assert sweep_launch_jobs() == 1
    job.refresh_from_db()
    assert job.dispatched
    assert redis_lib.Redis.from_url(redis.url).llen("launches") == 1


def test_a_launch_from_the_page_is_saved_as_scheduled(live_server, world, quotas, redis):
    browser = Browser(live_server, world.lead_a)
    redis.stop()
    response, took = browser.post(reverse("clusters:launch", kwargs={"slug": "parallelcluster"}),
                                  data=_launch_form(world.org_a))
    print(f"launch (page): {took:.2f} s")
    assert "saved as scheduled and will be sent" in browser.page(response)
    cluster = Cluster.objects.get(name="p5-train")
    assert cluster.state == ClusterState.SCHEDULED and not cluster.jobs.get().dispatched


def test_a_retry_is_saved_and_left_for_the_sweep(live_server, world, quotas, redis):
    cluster = launched_cluster(world.org_a, name="broken")
    Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.FAILED, failure_reason="stack_failed")
    browser = Browser(live_server, world.lead_a)
    redis.stop()
    response, took = browser.post(reverse("clusters:cluster_retry", kwargs={"pk": cluster.pk}))
    print(f"retry (page): {took:.2f} s")
    assert "saved as scheduled and will be sent" in browser.page(response)
    cluster.refresh_from_db()
    job = cluster.jobs.get(kind=ClusterJobKind.RETRY)
    assert cluster.state == ClusterState.SCHEDULED and not job.dispatched


def test_a_retry_through_the_api_is_saved_and_left_for_the_sweep(live_server, world, quotas, redis):
    cluster = launched_cluster(world.org_a, name="broken")
    Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.FAILED, failure_reason="stack_failed")
    redis.stop()
    response, took = Browser(live_server, world.lead_a).post(
        reverse("clusters-api:cluster-retry", kwargs={"pk": cluster.pk}))
    print(f"retry (API): {took:.2f} s")
    assert response.status_code == 202, response.text[:500]
    assert response.json()["dispatched"] is False and "will be sent when it is back" in response.json()["message"]
    assert not cluster.jobs.get(kind=ClusterJobKind.RETRY).dispatched


def test_a_delete_is_saved_and_left_for_the_sweep(live_server, world, quotas, redis):
    cluster = ready_cluster(world.org_a, name="big")
    browser = Browser(live_server, world.lead_a)
    redis.stop()
    response, took = browser.post(reverse("clusters:cluster_delete", kwargs={"pk": cluster.pk}),
                                  data={"confirm_name": "big"})
    print(f"delete (page): {took:.2f} s")
    assert "saved as scheduled and will be sent" in browser.page(response)
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING and not cluster.jobs.get(kind=ClusterJobKind.DELETE).dispatched


def test_a_delete_through_the_api_is_saved_and_left_for_the_sweep(live_server, world, quotas, redis):
    cluster = ready_cluster(world.org_a, name="big")
    redis.stop()
    browser = Browser(live_server, world.lead_a)
    started = time.monotonic()
    try:
        response = browser.http.delete(f"{live_server.url}{reverse('clusters-api:cluster-detail', kwargs={'pk': cluster.pk})}"
                                       "?confirm=big", timeout=(1.0, CLIENT_TIMEOUT))
    except requests.Timeout:
        pytest.fail(f"DELETE gave no answer within {CLIENT_TIMEOUT} s while Redis was down")
    print(f"delete (API): {time.monotonic() - started:.2f} s")
    assert response.status_code == 202, response.text[:500]
    assert response.json()["dispatched"] is False and "will be sent when it is back" in response.json()["message"]
    assert not cluster.jobs.get(kind=ClusterJobKind.DELETE).dispatched


def test_an_escalations_notification_is_kept_for_the_sweep(live_server, world, redis):
    from portal.core.notifications import sweep_pending

    NotificationSetting.objects.create(name="#leads", email_recipients="leads@example.com", include_internal=True,
                                       min_severity="low")
    interaction = InteractionFactory(organization=world.org_a)
    browser = Browser(live_server, world.lead_a)
    redis.stop()
    response, took = browser.post(reverse("interactions:interaction_escalate", args=[interaction.pk]),
                                  data={"reason": "NCCL falls back to sockets on 4 nodes"})
    print(f"notification (escalation): {took:.2f} s")
    assert "Escalated." in browser.page(response)
    delivery = NotificationDelivery.objects.get(channel="email")
    assert delivery.status == "pending" and delivery.dispatched_at is None  # kept for the sweep
    restart(redis)
    assert sweep_pending() >= 1
    assert NotificationDelivery.objects.get(channel="email").dispatched_at is not None


def test_a_slack_capture_is_acknowledged_and_kept_for_the_sweep(live_server, world, linked, slack_api,  # noqa: F811
                                                                redis):
    from django.conf import settings

    message = {"type": "message", "user": "U0LEAD", "ts": "1764000000.000100", "text": "NCCL falls back to sockets"}
    payload = {"type": "message_action", "callback_id": "log_interaction", "team": {"id": TEAM},
               "user": {"id": "U0LEAD"}, "channel": {"id": "C0ALPHA"}, "message": message,
               "response_url": f"{settings.SLACK_RESPONSE_URL_PREFIX}{TEAM}/1/hook"}
    body = urlencode({"payload": json.dumps(payload)})
    ts = str(int(time.time()))
    headers = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": ts,
               "X-Slack-Signature": SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)}
    redis.stop()
    response, took = Browser(live_server).post(reverse("engagement:slack_interactivity"), data=body, headers=headers)
    print(f"Slack capture: {took:.2f} s")
    assert response.status_code == 200, response.text[:500]
    capture = SlackCapture.objects.get()
    assert capture.status == "pending" and capture.dispatched_at is None  # kept for the sweep


def test_a_support_sync_says_the_periodic_sync_will_take_it(live_server, world, redis):
    interaction = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id=CASE_ID)
    browser = Browser(live_server, world.lead_a)
    redis.stop()
    response, took = browser.post(reverse("interactions:interaction_sync", args=[interaction.pk]))
    print(f"AWS Support sync: {took:.2f} s")
    page = browser.page(response)
    assert "the periodic sync of open cases takes it" in page and "not started" not in page


def test_a_hung_redis_holds_neither_a_push_nor_a_launch(live_server, world, quotas, redis):
    """Redis that accepts connections and never answers (paused, or gone behind a firewall that drops
    packets) is bounded by the socket timeouts: the rate limit lets the push through, the sends give up."""
    cluster = ClusterFactory(organization=world.org_a, name="alpha-train")
    token = services.rotate_token(cluster)
    redis.pause()
    try:
        push, push_took = Browser(live_server).post(
            reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}),
            data=sample("dcgm_p5_healthy.prom").encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
        launched, launch_took = Browser(live_server, world.lead_a).post(
            reverse("clusters-api:cluster-list"), data=json.dumps(_launch_body(world.org_a)),
            headers={"Content-Type": "application/json"})
    finally:
        redis.resume()
    print(f"hung Redis: push {push_took:.2f} s, launch (API) {launch_took:.2f} s")
    assert push.status_code == 202 and HealthPush.objects.get().dispatched_at is None
    assert launched.status_code == 202 and launched.json()["dispatched"] is False
    assert not Cluster.objects.get(name="trn-run").jobs.get().dispatched


def test_healthz_says_degraded_at_once(live_server, world, redis):
    redis.stop()
    browser = Browser(live_server, world.staff)
    started = time.monotonic()
    try:
        health = browser.http.get(live_server.url + "/healthz", timeout=(1.0, CLIENT_TIMEOUT))
    except requests.Timeout:
        pytest.fail(f"/healthz gave no answer within {CLIENT_TIMEOUT} s while Redis was down")
    print(f"/healthz: {time.monotonic() - started:.2f} s")
    assert health.status_code == 200 and health.json()["status"] == "degraded"
    assert health.json()["broker"]["ok"] is False


def test_a_send_that_asks_for_a_result_is_still_an_outage_not_an_error(redis):
    """A caller that asks for a result (``ignore_result=False``) subscribes to the result store first; when it
    is down Celery gives up with a RuntimeError (bounded by the store's retry policy): still "queued"."""
    from portal.core import jobs
    from portal.core.tasks import ping

    redis.stop()
    point_celery_at(redis.url, redis.url)
    started = time.monotonic()
    assert jobs.send(ping, "x", ignore_result=False) is False
    assert time.monotonic() - started < CLIENT_TIMEOUT
