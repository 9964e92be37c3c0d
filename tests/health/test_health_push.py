"""Pushes as jobs: 202 and a stored body, the worker's side, superseding, the per-token rate limit,
a down broker, a worker that died, and where a push stands on the API and the page — each with the
body in the local directory and in the portal's S3 bucket (the embedded endpoint)."""
from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from clusters.health.api import throttles
from clusters.health.ingest import bodies, pushes
from clusters.health.ingest import service as services
from clusters.health.models import HealthPush, HealthReport, NodeHealth
from tests.conftest import MARKER_A
from tests.faults.test_broker_down import private_redis  # noqa: F401 - fixture
from tests.health.factories_health import ClusterFactory, sample
from tests.workers import start_worker, worker_env

XID79 = "dcgm_p5_xid79_missing_gpu.prom"
HEALTHY = "dcgm_p5_healthy.prom"


@pytest.fixture(autouse=True, params=["local", "s3"])
def storage(request, settings, tmp_path):
    """Every test of this module runs with each push storage."""
    settings.HEALTH_PUSH_STORAGE = request.param
    settings.HEALTH_PUSH_DIR = str(tmp_path / "health-pushes")
    if request.param == "s3":
        request.getfixturevalue("aws")  # the embedded endpoint, empty: the bucket is created on first use
    return request.param


def stored_names(settings) -> list[str]:
    """Every body the storage holds (and, for S3, every multipart upload left open)."""
    if settings.HEALTH_PUSH_STORAGE == "local":
        directory = Path(settings.HEALTH_PUSH_DIR)
        return sorted(str(p) for p in directory.iterdir()) if directory.exists() else []
    from portal.core import aws

    s3 = aws.client("s3")
    bucket = settings.HEALTH_PUSH_BUCKET
    if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
        return []
    names = [f"s3://{bucket}/{o['Key']}" for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return names + [f"upload:{u['Key']}" for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


@pytest.fixture
def cluster(world):
    return ClusterFactory(organization=world.org_a, name="alpha-train", error_message=MARKER_A)


def _forget_push_counts():
    """The rate limit counts in Redis when it is configured (else in the cache): start every test at zero."""
    cache.clear()
    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = client.keys(throttles.KEY_PREFIX + "*")
        if keys:
            client.delete(*keys)


@pytest.fixture
def token(cluster):
    _forget_push_counts()
    return services.rotate_token(cluster)


def post(client, cluster, body: bytes, token: str, query: str = "", **headers):
    url = reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}) + query
    return client.post(url, data=body, content_type="text/plain", HTTP_AUTHORIZATION=f"Bearer {token}", **headers)


def test_push_answers_202_and_stores_the_compressed_body(client, cluster, token, storage, settings):
    text = sample(XID79).encode()
    response = post(client, cluster, text, token)
    assert response.status_code == 202
    row = HealthPush.objects.get(pk=response.json()["push"])
    assert row.status == "pending" and not HealthReport.objects.exists()  # nothing parsed in the request
    assert row.body.startswith("s3://" if storage == "s3" else "/")
    assert gzip.decompress(bodies.read_all(row.body)) == text and row.compressed_bytes < row.text_bytes
    status_url = response["Location"]
    assert client.get(status_url, HTTP_AUTHORIZATION=f"Bearer {token}").json()["status"] == "pending"
    report = pushes.process(row.pk)
    row.refresh_from_db()
    assert (row.status, row.report_id, row.claims) == ("done", report.pk, 1) and row.body == ""
    assert stored_names(settings) == []
    assert client.get(status_url, HTTP_AUTHORIZATION=f"Bearer {token}").json()["report"] == report.pk
    assert pushes.process(row.pk) is None  # a second delivery does nothing
    assert HealthReport.objects.count() == 1


def test_oversize_body_is_refused_without_reading_it_all(settings):
    class Endless(io.RawIOBase):
        read_bytes = 0

        def read(self, n=-1):
            self.read_bytes += n
            return b"DCGM_FI_DEV_XID_ERRORS 0\n" * (n // 25)

    stream = Endless()
    with pytest.raises(services.TooLarge):
        pushes.store_body(stream, max_bytes=3 * pushes.CHUNK, gzipped=False)
    assert stream.read_bytes <= 4 * pushes.CHUNK
    gz = io.BytesIO(gzip.compress(b"#" * (40 * pushes.CHUNK)))
    with pytest.raises(services.TooLarge):
        pushes.store_body(gz, max_bytes=3 * pushes.CHUNK, gzipped=True)
    assert stored_names(settings) == []  # nothing left behind, no multipart upload left open


def test_a_newer_full_push_supersedes_queued_older_ones(client, cluster, token, settings,
                                                        django_capture_on_commit_callbacks):
    first = post(client, cluster, sample(XID79).encode(), token).json()["push"]
    taken = post(client, cluster, sample(XID79).encode(), token).json()["push"]
    assert pushes.claim(taken)  # the worker has this one already: it is left to finish
    with django_capture_on_commit_callbacks(execute=True):  # superseded bodies are deleted on commit
        newer = post(client, cluster, sample(HEALTHY).encode(), token, "?scope=full").json()["push"]
    rows = {p.pk: p for p in HealthPush.objects.all()}
    assert rows[first].status == "superseded" and rows[first].superseded_by_id == newer
    assert f"superseded by push {newer}" in rows[first].error and rows[first].body == ""
    assert rows[taken].status == "processing" and rows[newer].status == "pending"
    assert pushes.process(first) is None
    pushes.process(newer)
    assert list(NodeHealth.objects.filter(cluster=cluster).values_list("hostname", flat=True)) == ["ip-10-1-45-12"]


def test_declared_nodes_supersede_only_what_they_cover(client, cluster, token):
    a = post(client, cluster, sample(XID79).encode(), token, "?nodes=ip-10-1-45-13").json()["push"]
    b = post(client, cluster, sample(HEALTHY).encode(), token, HTTP_X_HEALTH_NODES="ip-10-1-45-12").json()["push"]
    undeclared = post(client, cluster, sample(HEALTHY).encode(), token).json()["push"]
    c = post(client, cluster, sample(XID79).encode(), token, "?nodes=ip-10-1-45-13,ip-10-1-45-99").json()["push"]
    status = dict(HealthPush.objects.values_list("pk", "status"))
    assert (status[a], status[b], status[undeclared], status[c]) == ("superseded", "pending", "pending", "pending")
    assert HealthPush.objects.get(pk=c).declared_nodes == ["ip-10-1-45-13", "ip-10-1-45-99"]


@pytest.mark.parametrize("query", ["?scope=everything", "?nodes=" + "x" * 300])
def test_bad_scope_is_400_and_stores_nothing(client, cluster, token, query):
    response = post(client, cluster, sample(HEALTHY).encode(), token, query)
    assert response.status_code == 400 and not HealthPush.objects.exists()


def test_rate_limit_is_per_cluster_token(client, world, cluster, token, settings):
    settings.HEALTH_PUSH_RATE = "2/min"
    assert [post(client, cluster, b"x 1\n", token).status_code for _ in range(3)] == [202, 202, 429]
    other = ClusterFactory(organization=world.org_b, name="beta-train")
    assert post(client, other, b"x 1\n", services.rotate_token(other)).status_code == 202
    assert HealthPush.objects.filter(cluster=cluster).count() == 2


def test_rate_limit_holds_across_web_processes(client, cluster, token, settings):
    """Another process (a second web worker) counting pushes of the same token on the same Redis."""
    if not settings.REDIS_URL:
        pytest.skip("without Redis the rate limit counts per process")
    settings.HEALTH_PUSH_RATE = "3/min"
    assert post(client, cluster, b"x 1\n", token).status_code == 202
    other = subprocess.run(
        [sys.executable, "-c", "import sys, django; django.setup(); from clusters.health.api import throttles; "
         "print([throttles.count(sys.argv[1], 60)[0] for _ in range(2)])", f"cluster-{cluster.pk}"],
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "REDIS_URL": settings.REDIS_URL, "DJANGO_SETTINGS_MODULE": "portal.settings.test"})
    assert other.stdout.split("\n")[-2] == "[2, 3]", other.stdout + other.stderr
    refused = post(client, cluster, b"x 1\n", token)
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60
    assert HealthPush.objects.filter(cluster=cluster).count() == 1


def test_rate_limit_lets_pushes_through_while_redis_is_down(client, cluster, token, settings):
    """The push is stored for the sweep either way; a down Redis must not refuse it."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.HEALTH_PUSH_RATE = "1/min"
    assert [post(client, cluster, b"x 1\n", token).status_code for _ in range(2)] == [202, 202]


def test_broker_down_keeps_the_push_and_the_sweep_sends_it(client, cluster, token, private_redis,  # noqa: F811
                                                          django_capture_on_commit_callbacks):
    import redis

    from portal.celery import app

    private_redis.stop()
    app._pool = app.amqp._producer_pool = None
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, cluster, sample(HEALTHY).encode(), token)
    assert response.status_code == 202
    row = HealthPush.objects.get()
    assert row.status == "pending" and row.dispatched_at is None
    private_redis.start()
    app._pool = app.amqp._producer_pool = None
    assert pushes.recover() == 1
    row.refresh_from_db()
    assert row.dispatched_at is not None
    assert redis.Redis.from_url(private_redis.url).llen("health") == 1
    assert pushes.recover() == 0  # sent recently: not again until HEALTH_PUSH_RESEND_SECONDS


def test_a_dead_workers_push_is_taken_again_then_given_up(client, cluster, token):
    pk = post(client, cluster, sample(HEALTHY).encode(), token).json()["push"]
    assert pushes.claim(pk) and not pushes.claim(pk)  # leased
    HealthPush.objects.filter(pk=pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert pushes.process(pk) is not None
    pk = post(client, cluster, sample(HEALTHY).encode(), token).json()["push"]
    HealthPush.objects.filter(pk=pk).update(status="processing", claims=pushes.MAX_CLAIMS,
                                            lease_until=timezone.now() - timedelta(seconds=1))
    assert pushes.process(pk) is None
    row = HealthPush.objects.get(pk=pk)
    assert row.status == "failed" and "gave up" in row.error


def test_pushes_on_the_api_and_the_page_with_reasons(client, world, cluster, token):
    pk = post(client, cluster, b"\xff\xfe not text", token).json()["push"]
    pushes.process(pk)
    post(client, cluster, sample(HEALTHY).encode(), token)
    client.force_login(world.customer_a)
    rows = client.get(reverse("health-api:healthpush-list"), {"cluster": cluster.pk}).json()["results"]
    assert [r["status"] for r in rows] == ["pending", "failed"] and "UTF-8" in rows[1]["error"]
    page = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()
    assert "pending" in page and "UTF-8" in page
    client.force_login(world.customer_b)
    assert client.get(reverse("health-api:healthpush-detail", kwargs={"pk": pk})).status_code == 404
    assert client.get(reverse("health-api:healthpush-list")).json()["count"] == 0


def test_a_token_reads_only_its_own_clusters_pushes(client, world, cluster, token):
    pk = post(client, cluster, sample(HEALTHY).encode(), token).json()["push"]
    other = ClusterFactory(organization=world.org_b, name="beta-train")
    other_token = services.rotate_token(other)
    url = reverse("health-api:push-status", kwargs={"cluster_id": cluster.pk, "push_id": pk})
    assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {other_token}").status_code == 403
    wrong = reverse("health-api:push-status", kwargs={"cluster_id": other.pk, "push_id": pk})
    assert client.get(wrong, HTTP_AUTHORIZATION=f"Bearer {other_token}").status_code == 404


@pytest.mark.worker
def test_a_real_health_worker_processes_the_push(client, world, celery_worker_process):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-worker")
    token = services.rotate_token(cluster)
    cache.clear()
    response = post(client, cluster, gzip.compress(sample(XID79).encode()), token, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 202
    row = HealthPush.objects.get(pk=response.json()["push"])
    deadline = time.monotonic() + 60
    while row.status in ("pending", "processing") and time.monotonic() < deadline:
        time.sleep(0.2)
        row.refresh_from_db()
    assert row.status == "done", (row.status, row.error)
    assert row.report.nodes_reboot == 1 and row.report.source == "push"


def _big_scrape(nodes: int) -> str:
    """EFA series of ``nodes`` nodes with a random-looking label each: the gzip stays large (many parts)."""
    import random

    rnd = random.Random(7)
    lines = ["# TYPE node_amazonefa_rx_drops counter"]
    for n in range(nodes):
        for d in range(32):
            lines.append(f'node_amazonefa_rx_drops{{device="rdmap{d}s0",instance="ip-10-2-{n // 250}-{n % 250}:9109",'
                         f'port="1",trace="{rnd.getrandbits(2560):0640x}"}} {n % 3}')
    return "\n".join(lines) + "\n"


def test_a_large_body_is_stored_in_parts_and_read_as_a_stream(client, cluster, token, storage, settings, monkeypatch):
    monkeypatch.setattr(bodies, "PART", 5 << 20)  # S3's smallest part: two parts for this body
    text = _big_scrape(600).encode()
    response = post(client, cluster, gzip.compress(text, 1), token, HTTP_CONTENT_ENCODING="gzip")
    row = HealthPush.objects.get(pk=response.json()["push"])
    assert row.compressed_bytes > bodies.PART and row.text_bytes == len(text)
    if storage == "s3":
        from portal.core import aws

        key = row.body.split("/", 3)[3]
        head = aws.client("s3").head_object(Bucket=settings.HEALTH_PUSH_BUCKET, Key=key)
        assert head["ETag"].strip('"').endswith("-2")  # a multipart object of two parts
    report = pushes.process(row.pk)
    assert report.node_count == 600 and report.samples == 600 * 32
    assert stored_names(settings) == []


def test_a_lost_body_fails_the_push_with_the_reason(client, cluster, token):
    row = HealthPush.objects.get(pk=post(client, cluster, sample(HEALTHY).encode(), token).json()["push"])
    assert bodies.delete(row.body)
    assert pushes.process(row.pk) is None
    row.refresh_from_db()
    assert row.status == "failed" and "is gone" in row.error and "deleted or expired" in row.error
    assert not HealthReport.objects.exists()


def test_the_sweep_deletes_bodies_a_finished_push_left_and_the_bucket_expires_them(client, cluster, token, storage,
                                                                                  settings):
    row = HealthPush.objects.get(pk=post(client, cluster, sample(HEALTHY).encode(), token).json()["push"])
    HealthPush.objects.filter(pk=row.pk).update(status="done")  # finished while the storage was unreachable
    assert stored_names(settings) == [row.body]
    pushes.recover()
    assert stored_names(settings) == [] and HealthPush.objects.get(pk=row.pk).body == ""
    if storage == "s3":
        from portal.core import aws

        rules = aws.client("s3").get_bucket_lifecycle_configuration(Bucket=settings.HEALTH_PUSH_BUCKET)["Rules"]
        assert [(r["Filter"]["Prefix"], r["Expiration"]["Days"], r["AbortIncompleteMultipartUpload"]) for r in rules] \
            == [("pushes/", 1, {"DaysAfterInitiation": 1})]


def _start_worker(env: dict, log: Path):
    """A real health worker with one pool child, in a process group of its own (SIGKILL takes the child too)."""
    return start_worker("kill", env=env, log=log, queues="health", concurrency=1)


@pytest.mark.worker
def test_a_worker_killed_mid_read_leaves_the_push_to_be_processed_once(client, world, celery_worker_process,
                                                                       storage, settings, tmp_path):
    """SIGKILL the health worker while it reads a push: its lease runs out, the sweep sends the push again,
    another worker processes it, and there is one report — not zero, not two."""
    import signal

    celery_worker_process.send_signal(signal.SIGTERM)  # the shared worker would take the push too
    celery_worker_process.wait(timeout=60)
    settings.HEALTH_PUSH_LEASE_SECONDS = 3
    env = worker_env(settings.AWS_ENDPOINT_URL, {"HEALTH_PUSH_STORAGE": storage,
                                                 "HEALTH_PUSH_DIR": settings.HEALTH_PUSH_DIR,
                                                 "HEALTH_PUSH_LEASE_SECONDS": "3"})
    if env["DATABASE_URL"].startswith("sqlite"):
        pytest.skip("two processes on one SQLite test database")
    cluster = ClusterFactory(organization=world.org_a, name="alpha-kill")
    token = services.rotate_token(cluster)
    _forget_push_counts()
    text = _big_scrape(400)  # a read of a few seconds on this machine
    log = tmp_path / "worker.log"
    worker = _start_worker(env, log)
    response = post(client, cluster, gzip.compress(text.encode(), 1), token, HTTP_CONTENT_ENCODING="gzip")
    row = HealthPush.objects.get(pk=response.json()["push"])
    deadline = time.monotonic() + 60
    while row.status == "pending" and time.monotonic() < deadline:
        time.sleep(0.02)
        row.refresh_from_db()
    assert row.status == "processing" and not HealthReport.objects.exists(), (row.status, log.read_text()[-2000:])
    os.killpg(worker.pid, signal.SIGKILL)  # mid-read: the worker, its pool child, and the open stream
    worker.wait(timeout=30)
    row.refresh_from_db()
    assert row.status == "processing" and row.claims == 1 and not HealthReport.objects.exists()
    second = _start_worker(env, log)
    try:
        deadline = time.monotonic() + 180
        # Done first, then its body deleted from the store and the name cleared (a step of its own).
        while (row.status != "done" or row.body) and time.monotonic() < deadline:
            time.sleep(0.5)
            pushes.recover()  # beat's job: a push whose lease ran out is sent again
            row.refresh_from_db()
        assert row.status == "done", (row.status, row.error, log.read_text()[-3000:])
        assert row.claims == 2 and HealthReport.objects.filter(cluster=cluster).count() == 1
        assert row.report.node_count == 400 and row.body == "" and stored_names(settings) == []
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(timeout=60)
