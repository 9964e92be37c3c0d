"""The upload page and API on published logs: nothing asked that the log shows, nothing lost on an error,
Trainium clusters validated by nccom-test."""
from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from clusters.health.models import ValidationRun
from clusters.health.validation import readiness
from portal.core.models import TimelineEntry
from tests import samples
from tests.health.factories_health import ClusterFactory, sample


def real(name: str) -> str:
    return samples.text(name)


@pytest.fixture
def p5(world):
    return ClusterFactory(organization=world.org_a, name="alpha-train", instance_type="p5.48xlarge")


@pytest.fixture
def trn1(world):
    return ClusterFactory(organization=world.org_a, name="alpha-trn", instance_type="trn1.32xlarge")


def add_url(cluster) -> str:
    return reverse("health:validationrun_add", kwargs={"pk": cluster.pk})


def test_log_without_the_collective_is_stored_with_it_inferred(client, world, p5):
    client.force_login(world.customer_a)
    response = client.post(add_url(p5), {"file": SimpleUploadedFile("p5.txt", real(
        "nccl_awsome_p5_2node_srun.txt").encode())})
    assert response.status_code == 302, response.content.decode()[:3000]
    run = ValidationRun.objects.get()
    assert (run.collective, run.verdict, run.nodes, run.ranks, run.expected_busbw) == (
        "all_reduce", "pass", 2, 16, 487.0)
    assert run.result["collective_source"] == "inferred" and run.result["plateau_busbw"] == 487.26
    page = client.get(run.get_absolute_url()).content.decode()
    assert "inferred from the data: the log does not name it" in page
    assert readiness.is_validated(p5)


def test_several_runs_are_all_stored_and_listed(client, world, p5):
    client.force_login(world.lead_a)
    response = client.post(add_url(p5), {"text": real("nccl_dgx2_v100_several_runs.md")})
    assert response.status_code == 302
    run = ValidationRun.objects.get()
    assert [r["collective"] for r in run.result["runs"]] == [
        "all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]
    page = client.get(run.get_absolute_url()).content.decode()
    assert "Runs in this upload" in page and page.count('<td>31</td>') == 5
    # V100 on a p5 cluster: not this cluster's hardware, so the primary run is not a pass
    assert run.verdict == "warn" and "not from this cluster's hardware" in run.diagnosis
    assert not readiness.is_validated(p5)


def test_uploaded_file_is_kept_in_the_text_box_on_an_error(client, world, p5):
    client.force_login(world.customer_a)
    content = sample("nccl_allreduce_truncated.txt")
    response = client.post(add_url(p5), {"file": SimpleUploadedFile("cut.txt", content.encode())})
    page = response.content.decode()
    assert response.status_code == 200 and "truncated" in page
    assert "The content of cut.txt is kept in the text box below" in page
    assert html.escape(content.splitlines()[3]) in page  # the file's text is in the textarea
    assert not ValidationRun.objects.exists()


def test_pasted_text_is_shown_again_and_binary_files_are_said_to_be_lost(client, world, p5):
    client.force_login(world.customer_a)
    response = client.post(add_url(p5), {"text": "hello\nnot a log\n"})
    assert "no nccl-tests output found" in response.content.decode()
    assert "hello\nnot a log" in response.content.decode()
    response = client.post(add_url(p5), {"file": SimpleUploadedFile("x.bin", b"\x00\x01" * 50)})
    assert "The file x.bin was not kept: it is not text." in response.content.decode()


def test_trainium_cluster_is_validated_by_nccom_test(client, world, trn1):
    client.force_login(world.lead_a)
    response = client.post(add_url(trn1), {"text": real("nccom_trn1_2node_allr.txt")})
    assert response.status_code == 302
    run = ValidationRun.objects.get()
    assert (run.collective, run.verdict, run.nodes, run.ranks, run.peak_busbw, run.expected_busbw) == (
        "all_reduce", "pass", 2, 64, 47.09, 47.0)
    assert run.result["tool"] == "nccom-test"
    assert readiness.is_validated(trn1)
    assert TimelineEntry.objects.get(kind="validation").title == "alpha-trn: Neuron all_reduce validation passed"
    page = client.get(run.get_absolute_url()).content.decode()
    assert "Neuron nccom-test all_reduce" in page and "AWS Neuron nccom-test user guide" in page


def test_gpu_log_does_not_validate_a_trainium_cluster(client, world, trn1):
    client.force_login(world.lead_a)
    client.post(add_url(trn1), {"text": real("nccl_eks_p4d_2node_old_ranks.txt")})
    run = ValidationRun.objects.get()
    assert run.verdict == "warn" and "nccl-tests figures do not apply" in run.diagnosis
    assert not readiness.is_validated(trn1)


def test_single_node_trainium_run_is_stored_as_not_judged(client, world, trn1):
    client.force_login(world.lead_a)
    client.post(add_url(trn1), {"text": real("nccom_trn1_1node_allr.txt")})
    run = ValidationRun.objects.get()
    assert (run.verdict, run.get_verdict_display()) == ("none", "Not judged")
    assert run.diagnosis == "nothing was judged: no published reference for all_reduce on 1 × trn1.32xlarge"
    assert not readiness.is_validated(trn1)


def test_api_reads_nccom_test_and_refuses_another_organization(client, world, trn1):
    client.force_login(world.customer_a)
    url = reverse("health-api:validationrun-list")
    response = client.post(url, {"cluster": trn1.pk, "text": real("nccom_trn1_2node_allr.txt")},
                           content_type="application/json")
    assert response.status_code == 201 and response.json()["verdict"] == "pass"
    client.force_login(world.customer_b)
    response = client.post(url, {"cluster": trn1.pk, "text": real("nccom_trn1_2node_allr.txt")},
                           content_type="application/json")
    assert response.status_code == 400 and "cluster" in response.json()
    assert client.post(add_url(trn1), {"text": real("nccom_trn1_2node_allr.txt")}).status_code == 404
    assert ValidationRun.objects.count() == 1
