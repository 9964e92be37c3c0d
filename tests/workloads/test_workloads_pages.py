"""Workload pages for every role: list, document, in-place section edits, filters, CSV, query counts."""
import pytest
from django.urls import reverse

from tests import viewtests
from tests.queries import assert_flat_queries
from tests.workloads.factories_workloads import WorkloadFactory
from workloads.models import Workload

HX = {"HX-Request": "true"}


@pytest.fixture
def workload(world):
    return WorkloadFactory(organization=world.org_a, name="Alpha 100B", lead_sa=world.lead_a)


def section_url(w, section="infrastructure"):
    return reverse("workloads:workload_section", kwargs={"pk": w.pk, "section": section})


@pytest.mark.parametrize(("user", "status"), [
    ("customer_a", 200), ("lead_a", 200), ("pm", 200), ("staff", 200), ("customer_b", 404), ("lead_b", 404),
])
def test_document_page_per_role(client, world, workload, user, status):
    client.force_login(getattr(world, user))
    response = client.get(workload.get_absolute_url())
    assert response.status_code == status
    if status == 200:
        body = response.content.decode()
        assert "Megatron-LM 0.8.0" in body and "4 × p5.48xlarge" in body and "History" in body


@pytest.mark.parametrize(("user", "status"), [("customer_a", 403), ("pm", 403), ("lead_b", 404), ("customer_b", 404)])
def test_only_lead_sas_of_the_organization_edit(client, world, workload, user, status):
    client.force_login(getattr(world, user))
    assert client.get(section_url(workload), {"edit": 1}, headers=HX).status_code == status
    response = client.post(section_url(workload), {"orchestrator": "eks", "target_instance_type": "p5.48xlarge",
                                                   "target_instance_count": 2}, headers=HX)
    assert response.status_code == status
    assert client.get(reverse("workloads:workload_edit", kwargs={"pk": workload.pk})).status_code == status
    workload.refresh_from_db()
    assert workload.target_instance_count == 4


def test_customer_sees_no_edit_links(client, world, workload):
    client.force_login(world.customer_a)
    assert "?edit=1" not in client.get(workload.get_absolute_url()).content.decode()
    client.force_login(world.lead_a)
    assert "?edit=1" in client.get(workload.get_absolute_url()).content.decode()


def test_section_is_edited_in_place_with_htmx(client, world, workload):
    client.force_login(world.lead_a)
    form = client.get(section_url(workload), {"edit": 1}, headers=HX)
    assert form.status_code == 200 and b"<html" not in form.content and b'name="target_instance_count"' in form.content
    response = client.post(section_url(workload), {"orchestrator": "hyperpod_slurm", "target_instance_type": "p5.48xlarge",
                                                   "target_instance_count": "16"}, headers=HX)
    assert response.status_code == 200 and response["HX-Trigger"] == "workload-changed"
    assert "16 × p5.48xlarge" in response.content.decode()
    workload.refresh_from_db()
    assert (workload.orchestrator, workload.target_instance_count) == ("hyperpod_slurm", 16)
    hist = client.get(reverse("workloads:workload_history", kwargs={"pk": workload.pk})).content.decode()
    assert "Target instance count" in hist and "<del>4</del>" in hist and "<ins>16</ins>" in hist
    assert "SageMaker HyperPod (Slurm)" in hist
    assert "<html" in hist and "Back to the workload" in hist  # opened directly: a full page
    partial = client.get(reverse("workloads:workload_history", kwargs={"pk": workload.pk}), headers=HX).content
    assert b"<html" not in partial and b'id="workload-history"' in partial


def test_history_values_are_shown_in_the_display_time_zone():
    import datetime

    from workloads.history import display_value

    value = datetime.datetime(2026, 12, 1, 10, 52, 27, 458847, tzinfo=datetime.UTC)
    assert display_value(value) == "2026-12-01 19:52"  # Asia/Tokyo, to the minute
    assert display_value(datetime.date(2026, 12, 1)) == "2026-12-01"


def test_bad_section_input_shows_errors_and_saves_nothing(client, world, workload):
    client.force_login(world.lead_a)
    response = client.post(section_url(workload), {"orchestrator": "other", "target_instance_type": "p5.48xlarge",
                                                   "target_instance_count": "0"}, headers=HX)
    body = response.content.decode()
    assert "Must be at least 1." in body and "Name the orchestrator" in body
    workload.refresh_from_db()
    assert (workload.orchestrator, workload.target_instance_count) == ("parallelcluster_slurm", 4)
    assert workload.history.count() == 1


def test_unknown_section_is_404(client, world, workload):
    client.force_login(world.lead_a)
    assert client.get(section_url(workload, "secrets")).status_code == 404


def test_lead_creates_workload_only_in_own_organization(client, world):
    client.force_login(world.lead_a)
    data = {"name": "New run", "architecture": "dense", "parameters_billions": "13", "modality": "text",
            "training_stage": "pretraining", "orchestrator": "parallelcluster_slurm",
            "target_instance_type": "p5.48xlarge", "target_instance_count": "8", "status": "planning",
            "frameworks": "megatron-lm 0.9.0", "software": "cuda 12.4", "target_languages": ["ja"]}
    response = client.post(reverse("workloads:workload_add"), {**data, "organization": world.org_b.pk})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Workload.objects.exists()
    response = client.post(reverse("workloads:workload_add"), {**data, "organization": world.org_a.pk, "lead_sa": world.lead_a.pk})
    assert response.status_code == 302
    w = Workload.objects.get()
    assert (w.organization, w.lead_sa, w.frameworks) == (world.org_a, world.lead_a, [{"name": "megatron-lm", "version": "0.9.0"}])


@pytest.mark.parametrize(("params", "expected"), [
    ({"framework": "nemo"}, {"NeMo run"}),
    ({"framework": "megatron-lm"}, {"Megatron run"}),
    ({"model_family": "qwen"}, {"NeMo run"}),
    ({"instance_type": "trn1.32xlarge"}, {"Trainium run"}),
    ({"instance_type": "ml.trn1.32xlarge"}, {"Trainium run"}),
    ({"orchestrator": "hyperpod_eks"}, {"NeMo run"}),
    ({"status": "training"}, {"Megatron run"}),
    ({"architecture": "moe"}, {"Trainium run"}),
])
def test_list_filters(client, world, params, expected):
    WorkloadFactory(organization=world.org_a, name="Megatron run", status="training", lead_sa=world.lead_a)
    WorkloadFactory(organization=world.org_a, name="NeMo run", model_family="Qwen2.5", orchestrator="hyperpod_eks",
                    frameworks=[{"name": "nemo", "version": "2.0"}])
    WorkloadFactory(organization=world.org_b, name="Trainium run", architecture="moe", target_instance_type="trn1.32xlarge",
                    frameworks=[{"name": "nxd", "version": "0.9"}])
    client.force_login(world.pm)
    rows = client.get(reverse("workloads:workload_list"), {**params, "export": "csv"})
    names = {line.split(",")[1] for line in b"".join(rows.streaming_content).decode().splitlines()[1:]}
    assert names == expected


def test_list_filters_by_lead_sa_and_sorts(client, world):
    WorkloadFactory(organization=world.org_a, name="Small", parameters_billions=8, lead_sa=world.lead_a)
    WorkloadFactory(organization=world.org_a, name="Big", parameters_billions=405)
    client.force_login(world.pm)
    csv = b"".join(client.get(reverse("workloads:workload_list"), {"lead_sa": world.lead_a.pk, "export": "csv"}).streaming_content)
    assert [line.split(",")[1] for line in csv.decode().splitlines()[1:]] == ["Small"]
    csv = b"".join(client.get(reverse("workloads:workload_list"), {"ordering": "-parameters", "export": "csv"}).streaming_content)
    assert [line.split(",")[1] for line in csv.decode().splitlines()[1:]] == ["Big", "Small"]


def test_htmx_list_returns_the_table_only(client, world, workload):
    client.force_login(world.lead_a)
    response = client.get(reverse("workloads:workload_list"), {"status": "planning"}, headers=HX)
    assert b"<html" not in response.content and b"Alpha 100B" in response.content


def test_csv_neutralizes_formulas(client, world):
    WorkloadFactory(organization=world.org_a, name="=HYPERLINK(\"http://x\")", model_family="@SUM(A1)",
                    frameworks=[{"name": "other", "label": "-cmd", "version": "1"}])
    client.force_login(world.lead_a)
    body = b"".join(client.get(reverse("workloads:workload_list"), {"export": "csv"}).streaming_content).decode()
    row = body.splitlines()[1]
    assert "'=HYPERLINK" in row and "'@SUM(A1)" in row and "'-cmd 1" in row


def _bulk(world, n):
    orgs, start = [world.org_a, world.org_b], Workload.objects.count()
    Workload.objects.bulk_create([
        Workload(organization=orgs[i % 2], name=f"bulk {start + i}", parameters_billions=8, target_instance_type="p5.48xlarge",
                 target_instance_count=2, frameworks=[{"name": "nemo", "version": "2.0"}], lead_sa=world.lead_a)
        for i in range(n)
    ])


@pytest.mark.parametrize("user", ["pm", "lead_a"])
def test_filtered_list_query_count_does_not_grow(client, world, user):
    client.force_login(getattr(world, user))
    small, _ = assert_flat_queries(client, reverse("workloads:workload_list"), grow=lambda n: _bulk(world, n),
                                   params={"framework": "nemo", "ordering": "-parameters"}, sizes=(10, 1000))
    assert small <= 10


def test_document_shows_pending_requests_and_hyperpod_names(client, world, workload):
    from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory

    QuotaChangeRequestFactory(quota=InstanceQuotaFactory(organization=world.org_a, count=16), requested_count=24)
    client.force_login(world.lead_a)
    body = client.get(workload.get_absolute_url()).content.decode()
    assert "p5.48xlarge 16 → 24" in body and "Ask for a quota change" in body
    response = client.post(section_url(workload), {"orchestrator": "hyperpod_slurm", "target_instance_type": "ml.p5.48xlarge",
                                                   "target_instance_count": "4"}, headers=HX)
    assert response.status_code == 200
    workload.refresh_from_db()
    assert workload.target_instance_type == "ml.p5.48xlarge"
    client.force_login(world.customer_a)
    assert "Ask for a quota change" not in client.get(workload.get_absolute_url()).content.decode()


FORM = {"name": "New run", "architecture": "dense", "parameters_billions": "13", "modality": "text",
        "training_stage": "pretraining", "orchestrator": "parallelcluster_slurm",
        "target_instance_type": "p5.48xlarge", "target_instance_count": "8", "status": "planning",
        "frameworks": "megatron-lm 0.9.0", "software": "cuda 12.4", "target_languages": ["ja"]}


class TestWorkloadPages(viewtests.ListTests, viewtests.CsvTests, viewtests.DetailTests, viewtests.CreateTests,
                        viewtests.EditTests):
    model = Workload
    factory = WorkloadFactory
    url_names = {"list": "workloads:workload_list", "detail": "workloads:workload_detail",
                 "add": "workloads:workload_add", "edit": "workloads:workload_edit"}
    read_only = ("customer_a", "pm")
    foreign_create_status = {"customer_b": 403, "lead_b": 200}  # B's lead SA: organization A is no choice
    flat_roles = ("pm", "lead_a")
    max_queries = 10

    def form_data(self, world):
        return {**FORM, "organization": world.org_a.pk}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "target_instance_count": "0"}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "name": obj.name, "target_instance_count": "12"}

    def edited(self, obj):
        return obj.target_instance_count == 12
