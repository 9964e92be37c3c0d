"""The workloads API: scoped reads, role-checked writes, 400 with field errors on bad input, constant query counts."""
import pytest
from rest_framework.test import APIClient

from tests import viewtests
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory, WorkloadFactory
from workloads.models import CapacityReservation, InstanceQuota, Workload

BASE = "/api/workloads"


@pytest.fixture
def api():
    return APIClient()


def payload(org, **over):
    data = {"organization": org.slug, "name": "API run", "architecture": "dense", "parameters_billions": "70",
            "modality": "text", "target_languages": ["ja", "en"], "training_stage": "continued_pretraining",
            "frameworks": [{"name": "nemo", "version": "2.0"}], "software": [{"name": "cuda", "version": "12.4"}],
            "orchestrator": "hyperpod_slurm", "target_instance_type": "p5.48xlarge", "target_instance_count": 16,
            "status": "planning"}
    data.update(over)
    return data


def test_lead_creates_and_updates_a_workload(api, world):
    api.force_authenticate(world.lead_a)
    response = api.post(f"{BASE}/workloads/", payload(world.org_a, lead_sa=world.lead_a.pk), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["frameworks"] == [{"name": "nemo", "version": "2.0"}] and body["lead_sa_name"] == "lead_a"
    response = api.patch(f"{BASE}/workloads/{body['id']}/", {"status": "training"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "training"
    assert Workload.history.filter(id=body["id"]).count() == 2


@pytest.mark.parametrize(("over", "field"), [
    ({"target_instance_count": 0}, "target_instance_count"),
    ({"target_instance_count": -3}, "target_instance_count"),
    ({"target_instance_type": "x1.mega"}, "target_instance_type"),
    ({"frameworks": [{"name": "caffe", "version": "1"}]}, "frameworks"),
    ({"frameworks": [{"name": "other", "version": "1"}]}, "frameworks"),
    ({"fsx_lustre_size_gib": 1000, "fsx_lustre_throughput": 250}, "fsx_lustre_size_gib"),
    ({"target_languages": ["klingon"]}, "target_languages"),
])
def test_bad_input_is_a_400_with_field_errors(api, world, over, field):
    api.force_authenticate(world.lead_a)
    response = api.post(f"{BASE}/workloads/", payload(world.org_a, **over), format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert not Workload.objects.exists()


def test_lead_of_another_org_is_refused_as_lead_sa(api, world):
    api.force_authenticate(world.lead_a)
    response = api.post(f"{BASE}/workloads/", payload(world.org_a, lead_sa=world.lead_b.pk), format="json")
    assert response.status_code == 400 and "lead_sa" in response.json()


def test_list_is_scoped_and_filtered(api, world):
    WorkloadFactory(organization=world.org_a, name="A nemo", frameworks=[{"name": "nemo", "version": "2"}])
    WorkloadFactory(organization=world.org_a, name="A megatron")
    WorkloadFactory(organization=world.org_b, name="B nemo", frameworks=[{"name": "nemo", "version": "2"}])
    api.force_authenticate(world.customer_a)
    names = {w["name"] for w in api.get(f"{BASE}/workloads/").json()["results"]}
    assert names == {"A nemo", "A megatron"}
    api.force_authenticate(world.pm)
    names = {w["name"] for w in api.get(f"{BASE}/workloads/", {"framework": "nemo"}).json()["results"]}
    assert names == {"A nemo", "B nemo"}


def test_quota_api_customer_reads_but_never_writes(api, world):
    quota = InstanceQuotaFactory(organization=world.org_a, count=16)
    api.force_authenticate(world.customer_a)
    listed = api.get(f"{BASE}/quotas/").json()["results"]
    assert [(q["id"], q["count"], q["used"], q["instance_type"]) for q in listed] == [(quota.pk, 16, 0, "p5.48xlarge")]
    assert api.patch(f"{BASE}/quotas/{quota.pk}/", {"count": 99}, format="json").status_code == 403
    api.force_authenticate(world.lead_a)
    assert api.patch(f"{BASE}/quotas/{quota.pk}/", {"count": 99}, format="json").status_code == 403
    assert api.post(f"{BASE}/quotas/", {"organization": world.org_a.slug, "instance_type": "p5.48xlarge",
                                        "region": "us-east-1", "count": 2, "start": "2026-01-01",
                                        "end": "2026-12-31"}, format="json").status_code == 403
    api.force_authenticate(world.pm)
    assert api.patch(f"{BASE}/quotas/{quota.pk}/", {"count": 20}, format="json").status_code == 200
    quota.refresh_from_db()
    assert quota.count == 20


@pytest.mark.parametrize(("over", "field"), [
    ({"count": 0}, "count"), ({"count": -1}, "count"), ({"end": "2025-12-31"}, "end"),
    ({"instance_type": "p9.huge"}, "instance_type_name"), ({"region": "mars-1"}, "region"),
])
def test_quota_bad_input(api, world, over, field):
    api.force_authenticate(world.pm)
    data = {"organization": world.org_a.slug, "instance_type": "p5.48xlarge", "region": "ap-northeast-1",
            "count": 8, "start": "2026-01-01", "end": "2026-12-31", **over}
    response = api.post(f"{BASE}/quotas/", data, format="json")
    assert response.status_code == 400 and field in response.json(), response.json()
    assert not InstanceQuota.objects.exists()


def test_reservation_api_refuses_overlapping_same_id(api, world):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0",
                               start="2026-01-01", end="2026-03-31")
    api.force_authenticate(world.pm)
    data = {"organization": world.org_a.slug, "reservation_id": "cr-0123456789abcdef0", "kind": "capacity_block",
            "instance_type": "p5.48xlarge", "count": 4, "region": "ap-northeast-1",
            "availability_zone": "ap-northeast-1a", "start": "2026-03-01", "end": "2026-04-30"}
    response = api.post(f"{BASE}/reservations/", data, format="json")
    assert response.status_code == 400 and "overlap" in response.json()["reservation_id"][0]
    response = api.post(f"{BASE}/reservations/", {**data, "start": "2026-04-01"}, format="json")
    assert response.status_code == 201
    assert CapacityReservation.objects.count() == 2


def test_openapi_schema_describes_the_endpoints(api, world):
    api.force_authenticate(world.pm)
    schema = api.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for path in ("/api/workloads/workloads/", "/api/workloads/quotas/", "/api/workloads/reservations/",
                 "/api/workloads/quota-requests/", "/api/workloads/quota-requests/{id}/decide/"):
        assert path in paths, path
    params = {p["name"] for p in paths["/api/workloads/workloads/"]["get"]["parameters"]}
    assert {"framework", "instance_type", "orchestrator", "status", "lead_sa", "model_family"} <= params


class TestWorkloadApi(viewtests.ApiTests):
    model = Workload
    factory = WorkloadFactory
    api_basename = "workloads-api:workload"
    api_methods = ("post", "patch")
    read_only = ("customer_a", "pm")
    flat_roles = ("pm", "customer_a")

    def api_data(self, world):
        return payload(world.org_a)

    def api_invalid_data(self, world):
        return payload(world.org_a, target_instance_count=0)

    def api_patch(self, world, obj):
        return {"status": "training"}

    def api_patched(self, obj):
        return obj.status == "training"
