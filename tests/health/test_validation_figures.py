"""One bandwidth figure with one name on every view of a validation run, and one published run named by
the diagnosis and the Expected row alike."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from clusters.health.ingest import service as services
from clusters.health.models import ValidationRun
from tests import samples
from tests.health.factories_health import ClusterFactory
from tests.migrations import migrate, rolled_back_to


def real(name: str) -> str:
    return samples.text(name)


@pytest.fixture
def p5(world):
    return ClusterFactory(organization=world.org_a, name="alpha-train", instance_type="p5.48xlarge")


def stored(cluster, name: str, nodes: int | None = None) -> ValidationRun:
    text = real(name)
    return services.store_validation(cluster, text, services.parse_validation(cluster, text, nodes=nodes))


def cells(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_plateau_figure_is_the_same_on_the_run_page_the_health_table_and_the_api(client, world, p5):
    # AWS's published 2 × p5 run: 440.96 GB/s at 1 GiB, 487.26 at 16 GiB (the plateau the verdict judges)
    run = stored(p5, "nccl_awsome_p5_2node_srun.txt")
    assert (run.plateau_busbw, run.large_message_busbw) == (487.26, 440.96)
    client.force_login(world.customer_a)
    detail = cells(client.get(run.get_absolute_url()).content.decode())
    assert "Plateau bus bandwidth 487.26 GB/s" in detail
    assert "440.96" not in detail.split("Expected")[0]  # the 1 GiB row is in the rows table, not a second figure
    health = cells(client.get(reverse("health:cluster_health", kwargs={"pk": p5.pk})).content.decode())
    assert "Plateau bus bandwidth" in health and "487.26 GB/s (expected 487)" in health
    assert "440.96" not in health
    api = client.get(reverse("health-api:validationrun-detail", kwargs={"pk": run.pk})).json()
    assert api["plateau_busbw"] == 487.26 == api["result"]["plateau_busbw"]


def test_a_run_short_of_one_gib_says_so_instead_of_another_figure(client, world, p5):
    run = stored(p5, "nccl_awsome_eks_p5_excerpt.txt")  # largest message 2 GiB: has a plateau
    short = stored(p5, "nccom_awsome_slurm_no_command.txt")  # stops at 512 KiB
    assert run.plateau_busbw == 437.89 and short.plateau_busbw is None
    client.force_login(world.lead_a)
    health = cells(client.get(reverse("health:cluster_health", kwargs={"pk": p5.pk})).content.decode())
    assert "— (no message reached 1 GiB)" in health and "437.89 GB/s" in health


def test_diagnosis_and_expected_row_name_the_same_published_run(client, world, p5):
    run = stored(p5, "nccl_coreweave_h100_64gpu_elided.txt")  # 96 ranks by its figures: 12 p5 nodes
    assert run.nodes == 12 and run.expected_busbw == 487.0
    assert "published for 2 × p5.48xlarge (the figure for 2 nodes and more; this run had 12)" in run.diagnosis
    client.force_login(world.customer_a)
    page = cells(client.get(run.get_absolute_url()).content.decode())
    assert "Expected 487 GB/s published for 2 × p5.48xlarge: 2 × p5.48xlarge over EFA" in page
    assert "12 × p5.48xlarge" not in page


@pytest.mark.django_db(transaction=True)
def test_runs_stored_before_get_their_plateau_column():
    cluster = ClusterFactory()
    with rolled_back_to([("health", "0008_fault_first_week")]) as old:
        Run = old.get_model("health", "ValidationRun")
        common = {"cluster_id": cluster.pk, "collective": "all_reduce", "verdict": "pass"}
        with_plateau = Run.objects.create(result={"plateau_busbw": 477.55, "large_message_busbw": 419.49}, **common)
        without = Run.objects.create(result={"plateau_busbw": None}, **common)
        empty = Run.objects.create(result={}, **common)
        migrate([("health", "0009_validationrun_plateau_busbw")])
        assert dict(ValidationRun.objects.values_list("pk", "plateau_busbw")) == {
            with_plateau.pk: 477.55, without.pk: None, empty.pk: None}
