"""The push endpoint and the ingestion service: tokens, size limits, gzip, broken input, faults."""
from __future__ import annotations

import gzip

import pytest
from django.urls import reverse

from clusters.health.ingest import pushes
from clusters.health.ingest import service as services
from clusters.health.models import (
    ClusterHealthConfig,
    GpuFault,
    HealthPush,
    HealthReport,
    NodeHealth,
    hash_token,
)
from clusters.health.readers.prometheus import ParseError
from portal.core.models import TimelineEntry
from tests.health.factories_health import ClusterFactory, sample
from tests.queries import assert_flat_queries

XID79 = "dcgm_p5_xid79_missing_gpu.prom"
HEALTHY = "dcgm_p5_healthy.prom"


@pytest.fixture
def token(cluster):
    return services.rotate_token(cluster)


def push(client, cluster, body: bytes, token: str, **headers):
    """POST as an exporter does; an accepted push (202) is then processed as the health worker does
    (the worker's own function; tests/health/test_health_push.py runs a real worker)."""
    response = client.post(reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}), data=body,
                           content_type="text/plain; version=0.0.4", HTTP_AUTHORIZATION=f"Bearer {token}", **headers)
    if response.status_code == 202:
        pushes.process(response.json()["push"])
    return response


def outcome(response) -> HealthPush:
    return HealthPush.objects.get(pk=response.json()["push"])


def test_push_stores_summary_nodes_and_faults(client, cluster, token):
    response = push(client, cluster, sample(XID79).encode(), token)
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "pending" and response["Location"].endswith(
        f"/api/health/clusters/{cluster.pk}/metrics/{response.json()['push']}/")
    done = outcome(response)
    assert done.status == "done" and done.error == "" and done.text_bytes == len(sample(XID79).encode())
    report = done.report
    assert (report.source, report.xid_errors, report.missing_gpus, report.gpus_seen, report.gpus_expected) == (
        "push", 1, 1, 7, 8)
    assert report.healthy_gpu_share == 0.75 and report.nodes_reboot == 1
    node = NodeHealth.objects.get(report=report)
    assert node.hostname == "ip-10-1-45-13" and node.verdict == "reboot" and node.missing_gpus == [5]
    faults = {(f.kind, f.gpu, f.xid) for f in GpuFault.objects.filter(cluster=cluster)}
    assert faults == {("missing_gpu", "5", None), ("xid", "2", 79)}
    entry = TimelineEntry.objects.get(organization=cluster.organization, kind="fault")
    assert "ip-10-1-45-13" in entry.title and "and 1 more" in entry.title and entry.severity == "critical"


def test_token_is_stored_as_a_hash_only(cluster, token):
    config = ClusterHealthConfig.objects.get(cluster=cluster)
    assert token not in (config.token_hash, config.token_hint) and config.token_hash == hash_token(token)
    assert services.config_for_token(token) == config
    assert services.config_for_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None


def test_gzip_is_accepted(client, cluster, token):
    response = push(client, cluster, gzip.compress(sample(HEALTHY).encode()), token, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 202, response.content
    assert outcome(response).status == "done"
    assert HealthReport.objects.get().nodes_healthy == 1


def test_gzip_bomb_is_refused_with_413(client, cluster, token, settings):
    settings.HEALTH_INGEST_MAX_BYTES = 1024 * 1024
    bomb = gzip.compress(b"#" * (64 * 1024 * 1024))  # 64 MiB of text in ~64 KB
    assert len(bomb) < 200_000
    response = push(client, cluster, bomb, token, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413 and "decompressed" in response.json()["detail"]
    assert not HealthReport.objects.exists()


def test_plain_body_over_the_limit_is_413(client, cluster, token, settings):
    settings.HEALTH_INGEST_MAX_BYTES = 4096
    response = push(client, cluster, sample(HEALTHY).encode(), token)
    assert response.status_code == 413
    assert not HealthReport.objects.exists()


def test_limit_is_above_the_global_upload_limit(client, cluster, token, settings):
    """The endpoint reads its own stream: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is still accepted."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = push(client, cluster, sample(HEALTHY).encode(), token)
    assert response.status_code == 202 and outcome(response).status == "done"


def test_truncated_gzip_is_400(client, cluster, token):
    data = gzip.compress(sample(HEALTHY).encode())
    response = push(client, cluster, data[: len(data) // 2], token, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400 and "truncated" in response.json()["detail"]


def test_an_empty_body_is_400(client, cluster, token):
    response = push(client, cluster, b"", token)
    assert response.status_code == 400 and "empty" in response.json()["detail"]
    assert not HealthPush.objects.exists()


@pytest.mark.parametrize(("body", "message"), [
    (b"\x00\x01\x02binary", "binary"),
    (b"\xff\xfe\xfd", "UTF-8"),
    (b"# just a comment\nup 1\n", "no dcgm-exporter"),
])
def test_bad_bodies_fail_with_the_reason_and_keep_the_previous_summary(client, cluster, token, body, message):
    assert outcome(push(client, cluster, sample(XID79).encode(), token)).status == "done"
    before = (HealthReport.objects.count(), GpuFault.objects.count(), NodeHealth.objects.count())
    response = push(client, cluster, body, token)
    assert response.status_code == 202, response.content
    failed = outcome(response)
    assert failed.status == "failed" and message in failed.error and failed.report is None
    assert (HealthReport.objects.count(), GpuFault.objects.count(), NodeHealth.objects.count()) == before


def test_broken_line_fails_with_its_line_number(client, cluster, token):
    response = push(client, cluster, sample("dcgm_p5_broken_line.prom").encode(), token)
    failed = outcome(response)
    assert failed.status == "failed" and failed.error.startswith("line 45:"), failed.error
    assert not HealthReport.objects.exists()


def test_token_of_another_cluster_is_refused(client, world, cluster, token):
    other = ClusterFactory(organization=world.org_b, name="beta-train")
    other_token = services.rotate_token(other)
    response = push(client, cluster, sample(HEALTHY).encode(), other_token)
    assert response.status_code == 403
    assert push(client, cluster, sample(HEALTHY).encode(), "gh1.nonsense").status_code == 401
    assert push(client, cluster, sample(HEALTHY).encode(), "not-a-token").status_code == 401
    assert not HealthReport.objects.exists()


def test_rotated_token_stops_the_old_one(client, cluster, token):
    new = services.rotate_token(cluster)
    assert push(client, cluster, sample(HEALTHY).encode(), token).status_code == 401
    assert push(client, cluster, sample(HEALTHY).encode(), new).status_code == 202


def test_a_user_session_cannot_push(client, world, cluster, token):
    client.force_login(world.lead_a)
    response = client.post(reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}),
                           data=sample(HEALTHY), content_type="text/plain")
    assert response.status_code == 401
    assert not HealthReport.objects.exists()


def test_fault_lifecycle_open_update_clear(cluster, settings):
    settings.HEALTH_FAULT_CLEAR_AFTER = 2
    xid, healthy = sample(XID79), sample(HEALTHY).replace("ip-10-1-45-12", "ip-10-1-45-13")
    services.ingest(cluster, xid, "push")
    first = {f.key: f for f in GpuFault.objects.all()}
    services.ingest(cluster, xid, "push")
    again = {f.key: f for f in GpuFault.objects.all()}
    assert set(first) == set(again) and all(again[k].last_seen > first[k].first_seen for k in again)
    assert TimelineEntry.objects.filter(kind="fault").count() == 1  # only new critical faults are announced
    services.ingest(cluster, healthy, "push")
    assert list(GpuFault.objects.values_list("absent_reports", "cleared_at")) == [(1, None), (1, None)]
    services.ingest(cluster, healthy, "push")
    assert GpuFault.objects.filter(cleared_at__isnull=True).count() == 0
    assert set(GpuFault.objects.values_list("absent_reports", flat=True)) == {2}
    services.ingest(cluster, xid, "push")  # back again: a new fault, a new announcement
    assert GpuFault.objects.filter(cleared_at__isnull=True).count() == 2
    assert TimelineEntry.objects.filter(kind="fault").count() == 2


def test_each_node_keeps_the_row_of_the_latest_report_that_covered_it(cluster):
    a = services.ingest(cluster, sample(XID79), "push").report  # ip-10-1-45-13
    b = services.ingest(cluster, sample(HEALTHY), "push").report  # ip-10-1-45-12 only: a partial report
    rows = dict(NodeHealth.objects.filter(cluster=cluster).values_list("hostname", "report_id"))
    assert rows == {"ip-10-1-45-13": a.pk, "ip-10-1-45-12": b.pk}
    b.refresh_from_db()
    assert (b.node_count, b.nodes_healthy, b.nodes_reboot, b.xid_errors) == (2, 1, 1, 1)  # the merged cluster
    c = services.ingest(cluster, sample(HEALTHY), "push").report
    assert NodeHealth.objects.filter(cluster=cluster, hostname="ip-10-1-45-12").get().report_id == c.pk
    assert HealthReport.objects.get(pk=a.pk).xid_errors == 1


def test_a_full_report_replaces_the_node_table(cluster):
    services.ingest(cluster, sample(XID79), "push")
    b = services.ingest(cluster, sample(HEALTHY), "push", scope="full").report
    assert list(NodeHealth.objects.filter(cluster=cluster).values_list("hostname", "report_id")) == [
        ("ip-10-1-45-12", b.pk)]
    assert (b.node_count, b.nodes_healthy, b.xid_errors) == (1, 1, 0)
    assert set(GpuFault.objects.filter(cleared_at__isnull=True).values_list("absent_reports", flat=True)) == {1}


def test_counter_growth_uses_the_previous_report(cluster):
    services.ingest(cluster, sample("efa_p5_two_nodes.prom"), "push")
    report = services.ingest(cluster, sample("efa_p5_two_nodes_later.prom"), "push").report
    kinds = {f["kind"] for f in report.summary["faults"]}
    assert kinds & {"efa_rdma_read_err", "efa_rx_drops", "efa_retrans_timeout"}, kinds


def test_parse_error_raises_before_anything_is_stored(cluster):
    with pytest.raises(ParseError):
        services.ingest(cluster, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\" 1\n", "push")
    assert not HealthReport.objects.exists()


def _scrape_with_faulty_nodes(n: int) -> str:
    """n nodes, each with an XID 79 on GPU 2 (built from the sample by renaming the host)."""
    text = sample(XID79)
    return "".join(text.replace("ip-10-1-45-13", f"ip-10-9-0-{i}") if i == 0 else
                   "\n".join(line for line in text.replace("ip-10-1-45-13", f"ip-10-9-0-{i}").splitlines()
                             if not line.startswith("#")) + "\n" for i in range(n))


def test_ingest_query_count_does_not_grow_with_faults(cluster):
    nodes = []

    def grow(n):
        nodes.append((nodes[-1] if nodes else 0) + n)
        services.ingest(cluster, _scrape_with_faulty_nodes(nodes[-1]), "push")
        assert GpuFault.objects.filter(cluster=cluster).count() == 2 * nodes[-1]

    # savepoint, cluster lock, current state, replaced rows, report, delete and insert nodes, open faults,
    # updates, fault counts, oldest node, state save, release. SQLite takes at most 999 parameters a statement,
    # so it splits the bulk update of 80 faults in two; PostgreSQL sends it whole.
    from django.db import connection

    assert_flat_queries(lambda: services.ingest(cluster, _scrape_with_faulty_nodes(nodes[-1]), "push"), grow=grow,
                        sizes=(2, 40), at_most=13, batches=0 if connection.vendor == "postgresql" else 1)


@pytest.mark.parametrize(("name", "gpus"), [
    ("dcgm_p5_kubernetes.prom", 8), ("dcgm_p5_mig.prom", 8), ("dcgm_p5_hostname_lowercase.prom", 8),
    ("dcgm_p5_sentinels.prom", 8),
])
def test_label_variants_through_the_endpoint(client, cluster, token, name, gpus):
    response = push(client, cluster, sample(name).encode(), token)
    assert response.status_code == 202 and outcome(response).status == "done", outcome(response).error
    report = HealthReport.objects.get()
    assert report.node_count == 1 and report.gpus_seen == gpus and report.missing_gpus == 0
    node = NodeHealth.objects.get()
    assert node.hostname.startswith("ip-") and node.gpus_seen == gpus


def test_mixed_up_upload_nccl_output_pushed_as_metrics(client, cluster, token):
    response = push(client, cluster, sample("nccl_allreduce_2xp5_efa_srun.txt").encode(), token)
    failed = outcome(response)
    assert failed.status == "failed" and failed.error.startswith("line "), failed.error
    assert not HealthReport.objects.exists()


def test_an_xid_of_minus_inf_is_stored_with_a_note_not_a_crash(cluster):
    lines = sample(XID79).splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("DCGM_FI_DEV_XID_ERRORS{"))
    lines[first] = lines[first].rsplit(" ", 1)[0] + " -Inf"
    report = services.ingest(cluster, "\n".join(lines) + "\n", "push").report
    assert any("not an XID code" in note for note in report.summary["notes"]), report.summary["notes"]
