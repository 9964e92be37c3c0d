"""NCCL validation: upload page and API, bad uploads, the acceptance gate and the readiness checklist."""
from __future__ import annotations

import datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from clusters.health.ingest import service as services
from clusters.health.models import HealthReport, ValidationRun
from clusters.health.validation import readiness
from clusters.models import Stack
from portal.core.models import TimelineEntry
from tests.conftest import MARKER_A
from tests.health.factories_health import ClusterFactory, sample, validation_run

EFA = "nccl_allreduce_2xp5_efa_srun.txt"
SOCKET = "nccl_allreduce_2xp5_socket_srun.txt"


def test_customer_uploads_a_passing_run_page(client, world, cluster):
    client.force_login(world.customer_a)
    url = reverse("health:validationrun_add", kwargs={"pk": cluster.pk})
    assert client.get(url).status_code == 200
    response = client.post(url, {"file": SimpleUploadedFile("out.txt", sample(EFA).encode()), "notes": "first"})
    assert response.status_code == 302, response.content.decode()[:2000]
    run = ValidationRun.objects.get()
    assert (run.verdict, run.collective, run.nodes, run.ranks, run.transport) == ("pass", "all_reduce", 2, 16, "efa")
    assert (run.peak_busbw, run.expected_busbw, run.uploaded_by) == (487.01, 487.0, world.customer_a)
    assert len(run.rows) == 15 and run.raw_text.startswith(sample(EFA)[:50])
    assert readiness.is_validated(cluster)
    assert TimelineEntry.objects.filter(kind="validation", organization=world.org_a).count() == 1
    page = client.get(response["Location"])
    assert b'id="nccl-chart-data"' in page.content and b"<script>" not in page.content


def test_socket_fallback_fails_with_an_actionable_diagnosis(client, world, cluster):
    client.force_login(world.lead_a)
    client.post(reverse("health:validationrun_add", kwargs={"pk": cluster.pk}), {"text": sample(SOCKET)})
    run = ValidationRun.objects.get()
    assert run.verdict == "fail" and run.transport == "socket"
    assert run.diagnosis.startswith("NCCL used TCP sockets instead of EFA: check the aws-ofi-nccl plugin")
    assert not readiness.is_validated(cluster)


@pytest.mark.parametrize(("data", "error"), [
    ({"text": ""}, "Upload the nccl-tests output or paste it."),
    ({"text": sample("nccl_allreduce_truncated.txt")}, "truncated"),
    ({"text": "hello\nworld\n"}, "no nccl-tests output found"),
    ({"text": sample("dcgm_p5_healthy.prom")}, "no nccl-tests output found"),  # a scrape uploaded as a run
    ({"file": SimpleUploadedFile("x.bin", b"\x00\x01\x02" * 100)}, "binary"),
    ({"text": sample(EFA), "collective": "all_to_some"}, "Select a valid choice"),
    ({"text": sample(EFA), "file": SimpleUploadedFile("x.txt", b"x")}, "not both"),
])
def test_bad_uploads_are_form_errors(client, world, cluster, data, error):
    client.force_login(world.customer_a)
    response = client.post(reverse("health:validationrun_add", kwargs={"pk": cluster.pk}), data)
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not ValidationRun.objects.exists()


def test_gigantic_upload_is_refused(client, world, cluster, settings):
    settings.HEALTH_VALIDATION_MAX_BYTES = 2000
    client.force_login(world.customer_a)
    response = client.post(reverse("health:validationrun_add", kwargs={"pk": cluster.pk}),
                           {"file": SimpleUploadedFile("big.txt", sample(EFA).encode())})
    assert "over 2,000 bytes" in response.content.decode() and not ValidationRun.objects.exists()


def test_program_manager_reads_but_cannot_upload(client, world, cluster):
    client.force_login(world.pm)
    assert client.get(reverse("health:validationrun_add", kwargs={"pk": cluster.pk})).status_code == 403
    run = validation_run(cluster)
    assert client.get(run.get_absolute_url()).status_code == 200


def test_customer_of_another_organization_is_refused(client, world, cluster):
    run = validation_run(cluster, notes=MARKER_A)
    client.force_login(world.customer_b)
    assert client.get(run.get_absolute_url()).status_code == 404
    assert client.post(reverse("health:validationrun_add", kwargs={"pk": cluster.pk}),
                       {"text": sample(EFA)}).status_code == 404
    api = client.get(reverse("health-api:validationrun-list")).json()
    assert api["count"] == 0


def test_api_upload_text_and_multipart(client, world, cluster):
    client.force_login(world.customer_a)
    url = reverse("health-api:validationrun-list")
    response = client.post(url, {"cluster": cluster.pk, "text": sample(EFA)}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["verdict"] == "pass" and "text" not in response.json()
    response = client.post(url, {"cluster": cluster.pk, "file": SimpleUploadedFile("a.txt", sample(SOCKET).encode())})
    assert response.status_code == 201 and response.json()["transport"] == "socket"
    assert ValidationRun.objects.count() == 2


def test_api_upload_errors(client, world, cluster):
    client.force_login(world.customer_a)
    url = reverse("health-api:validationrun-list")
    response = client.post(url, {"cluster": cluster.pk, "text": "garbage"}, content_type="application/json")
    assert response.status_code == 400 and "no nccl-tests output" in response.json()["text"][0]
    response = client.post(url, {"cluster": cluster.pk, "text": sample(EFA), "collective": "gather_all"},
                           content_type="application/json")
    assert response.status_code == 400 and "collective" in response.json()
    other = ClusterFactory(organization=world.org_b)
    response = client.post(url, {"cluster": other.pk, "text": sample(EFA)}, content_type="application/json")
    assert response.status_code == 400 and "cluster" in response.json()
    assert not ValidationRun.objects.exists()


def test_readiness_checklist(world, cluster):
    items = {i.key: i for i in readiness.checklist(world.org_a)}
    assert items["cluster"].ok and items["network"].ok and "derived from cluster state" in items["network"].detail
    from clusters.blueprints import catalog

    stack = Stack.objects.create(cluster=cluster, role="network", order=0, blueprint=catalog.sync()["network"],
                                 stack_name="geniac-alpha-net-1", status="CREATE_IN_PROGRESS")
    items = {i.key: i for i in readiness.checklist(world.org_a)}
    assert not items["network"].ok and "not complete: CREATE_IN_PROGRESS" in items["network"].detail
    assert not items["storage"].ok and items["storage"].detail == "no storage stack yet"
    stack.status = "CREATE_COMPLETE"
    stack.save()
    assert {i.key: i for i in readiness.checklist(world.org_a)}["network"].ok
    assert not items["monitoring"].ok and not items["validation"].ok
    services.ingest(cluster, sample("dcgm_p5_healthy.prom"), "push")
    validation_run(cluster)
    items = {i.key: i for i in readiness.checklist(world.org_a)}
    assert items["monitoring"].ok and items["validation"].ok and "alpha-train" in items["validation"].detail
    HealthReport.objects.update(received_at=timezone.now() - datetime.timedelta(hours=2))
    items = {i.key: i for i in readiness.checklist(world.org_a)}
    assert not items["monitoring"].ok and "none in the last 30 minutes" in items["monitoring"].detail


def test_readiness_on_the_organization_page(client, world, cluster):
    validation_run(cluster)
    client.force_login(world.customer_a)
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "Readiness" in page and "Ready clusters validated" in page and "alpha-train</a> (validated)" in page
    client.force_login(world.customer_b)
    page = client.get(world.org_b.get_absolute_url()).content.decode()
    assert "no cluster yet" in page and "alpha-train" not in page
