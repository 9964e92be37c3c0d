"""Push storage (S3) outages, against an S3 endpoint of the test's own: a moto server in a separate process on a
free port, so the test can stop it, hang it (SIGSTOP, then SIGCONT) and start it again empty.

- a read that fails for an outage is retried (the push stays pending, its claims untouched) until the store
  is back; only a body that is really gone fails, and a push that waited longer than a push may fails saying so;
- a push while the store is down or hung answers 503 with Retry-After, and nothing is written (no row, no body);
- after the store comes back without the bucket, the next push creates it (no web server restart);
- the store's client has bounded connect and read times and retries (a hung store answers 503).
"""
from __future__ import annotations

import gzip
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from clusters.health.ingest import bodies, pushes
from clusters.health.models import HealthPush, HealthReport
from tests.faults.test_broker_down import _free_port
from tests.health.factories_health import sample
from tests.health.test_health_push import HEALTHY, cluster, post, token  # noqa: F401 - fixtures


class S3Process:
    """``python -m moto.server`` on a port of its own; start() again after stop() is a new, empty store."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the moto server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None

    def pause(self) -> None:
        """Hung: the kernel still accepts connections, nothing answers."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)


@pytest.fixture
def s3(settings):
    server = S3Process()
    server.start()
    settings.HEALTH_PUSH_STORAGE = "s3"
    settings.HEALTH_PUSH_S3_ENDPOINT_URL = server.url
    settings.HEALTH_PUSH_S3_ACCESS_KEY_ID, settings.HEALTH_PUSH_S3_SECRET_ACCESS_KEY = "testing", "testing"
    settings.HEALTH_PUSH_S3_CONNECT_TIMEOUT, settings.HEALTH_PUSH_S3_READ_TIMEOUT = 1.0, 1.0
    settings.HEALTH_PUSH_S3_MAX_ATTEMPTS = 1
    bodies._clients.clear()
    yield server
    if server.proc is not None:
        server.resume()
        server.stop()
    bodies._clients.clear()


def _push(client, cluster, token) -> HealthPush:  # noqa: F811 - fixtures
    response = post(client, cluster, sample(HEALTHY).encode(), token)
    assert response.status_code == 202, response.content
    return HealthPush.objects.get(pk=response.json()["push"])


def _objects(s3) -> list[str]:
    import boto3

    client = boto3.client("s3", endpoint_url=s3.url, region_name="ap-northeast-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    buckets = [b["Name"] for b in client.list_buckets()["Buckets"]]
    return [o["Key"] for b in buckets for o in client.list_objects_v2(Bucket=b).get("Contents", [])]


def test_a_read_during_an_outage_is_retried_not_failed(client, cluster, token, s3):  # noqa: F811
    queued = [_push(client, cluster, token) for _ in range(3)]
    s3.stop()
    for row in queued:
        with pytest.raises(pushes.StorageWait) as wait:
            pushes.process(row.pk)
        assert wait.value.countdown > 0
    for n, row in enumerate(queued):
        row.refresh_from_db()
        assert (row.status, row.claims, row.lease_until) == ("pending", 0, None), row.error
        assert "waiting for the push storage" in row.error
        with pytest.raises(pushes.StorageWait):
            pushes.process(row.pk, outages=n + 3)  # the backoff grows and stays bounded
    # moto keeps nothing across a restart: back, the store no longer holds the bodies, and only now they fail
    s3.start()
    for row in queued:
        assert pushes.process(row.pk) is None
        row.refresh_from_db()
        assert row.status == "failed" and "is gone" in row.error


def test_a_read_from_a_hung_store_is_retried_and_ingested_once_it_answers(client, cluster, token, s3):  # noqa: F811
    queued = [_push(client, cluster, token) for _ in range(2)]
    s3.pause()
    try:
        for row in queued:
            with pytest.raises(pushes.StorageWait):
                pushes.process(row.pk)
    finally:
        s3.resume()
    for row in queued:
        row.refresh_from_db()
        assert (row.status, row.claims) == ("pending", 0), row.error
        assert pushes.process(row.pk) is not None
        row.refresh_from_db()
        assert (row.status, row.claims) == ("done", 1)
    assert HealthReport.objects.count() == 2


def test_backoff_doubles_up_to_a_bound_and_a_push_that_waited_too_long_fails_with_the_reason(
        client, cluster, token, s3, settings):  # noqa: F811
    row = _push(client, cluster, token)
    s3.stop()
    settings.HEALTH_PUSH_STORAGE_RETRY_SECONDS = 30
    countdowns = []
    for outages in range(6):
        with pytest.raises(pushes.StorageWait) as wait:
            pushes.process(row.pk, outages=outages)
        countdowns.append(wait.value.countdown)
    assert countdowns == [30, 60, 120, 240, 300, 300]
    HealthPush.objects.filter(pk=row.pk).update(
        received_at=timezone.now() - timedelta(seconds=settings.HEALTH_PUSH_MAX_WAIT_SECONDS + 1))
    with pytest.raises(pushes.StorageWait) as wait:
        pushes.process(row.pk)
    assert wait.value.countdown == 0
    row.refresh_from_db()
    assert row.status == "failed" and "longer than a push may wait" in row.error


def test_a_body_really_gone_still_fails_at_once(client, cluster, token, s3):  # noqa: F811
    row = _push(client, cluster, token)
    s3.stop()
    s3.start()  # back, empty: the bucket and the body are gone
    assert pushes.process(row.pk) is None
    row.refresh_from_db()
    assert row.status == "failed" and "NoSuchBucket" in row.error and "is gone" in row.error


def test_a_push_while_the_store_is_down_is_a_503_and_writes_nothing(client, cluster, token, s3):  # noqa: F811
    _push(client, cluster, token)
    s3.stop()
    response = post(client, cluster, sample(HEALTHY).encode(), token)
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    assert "unavailable" in response.json()["detail"]
    assert HealthPush.objects.count() == 1


def test_a_hung_store_is_bounded_and_answers_503(client, cluster, token, s3):  # noqa: F811
    _push(client, cluster, token)
    client_config = bodies._client().meta.config
    assert (client_config.connect_timeout, client_config.read_timeout, client_config.retries["total_max_attempts"]) \
        == (1.0, 1.0, 2)  # botocore counts the first try and one retry
    s3.pause()
    try:
        response = post(client, cluster, sample(HEALTHY).encode(), token)
    finally:
        s3.resume()
    assert response.status_code == 503 and response["Retry-After"]
    assert HealthPush.objects.count() == 1
    assert len(_objects(s3)) == 1  # nothing half-written


def test_the_default_store_client_is_bounded(settings):
    from portal.settings import base

    assert base.HEALTH_PUSH_S3_CONNECT_TIMEOUT <= 5 and base.HEALTH_PUSH_S3_READ_TIMEOUT <= 10
    assert base.HEALTH_PUSH_S3_MAX_ATTEMPTS <= 3


def test_the_store_back_without_its_bucket_is_used_without_a_restart(client, cluster, token, s3):  # noqa: F811
    first = _push(client, cluster, token)
    s3.stop()
    s3.start()  # empty: no bucket
    second = _push(client, cluster, token)
    assert gzip.decompress(bodies.read_all(second.body)) == sample(HEALTHY).encode()
    assert second.body != first.body and len(_objects(s3)) == 1
