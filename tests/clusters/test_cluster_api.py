"""The clusters API: blueprints, launches with field errors, retry, delete, jobs and events, scoped."""
from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from clusters.choices import ClusterJobKind, ClusterState
from clusters.models import Cluster, LaunchJob
from tests.clusters.factories_clusters import StackEventFactory, launched_cluster, ready_cluster
from tests.queries import assert_flat_queries
from workloads.models import InstanceQuota

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
CLUSTERS = reverse("clusters-api:cluster-list")


def _api(user):
    api = APIClient()
    api.force_authenticate(user)
    return api


def _launch(org, **overrides):
    body = {"organization": org.slug, "name": "trn-run", "blueprint": "hyperpod", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"}, "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"WorkerInstanceType": "ml.trn1.32xlarge", "WorkerCount": "4"}}}
    body.update(overrides)
    return body


def test_blueprints_are_readable_by_every_member_with_parameters_and_hash(world):
    response = _api(world.customer_b).get(reverse("clusters-api:blueprint-detail", kwargs={"slug": "storage"}))
    body = response.json()
    assert response.status_code == 200 and body["kind"] == "storage" and len(body["content_hash"]) == 64
    capacity = next(p for p in body["parameters"] if p["name"] == "LustreStorageCapacity")
    assert capacity["default"] == "1200" and "2400" in capacity["allowed_values"]
    assert body["resources"]["AWS::FSx::FileSystem"] == 2
    assert "LustreFileSystemId" in [o["name"] for o in body["outputs"]]


def test_api_launch_creates_the_cluster_and_job(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = _api(world.lead_a).post(CLUSTERS, _launch(world.org_a), format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["state"] == "scheduled"
    assert LaunchJob.objects.get(cluster_id=body["id"]).dispatched  # sent once the transaction committed
    assert [s["role"] for s in body["stacks"]] == ["network", "storage", "cluster"]
    cluster = Cluster.objects.get(pk=body["id"])
    assert (cluster.instance_type, cluster.node_count, cluster.orchestrator) == ("ml.trn1.32xlarge", 4, "hyperpod")


@pytest.mark.parametrize("overrides,field", [
    ({"blueprint": "nope"}, "blueprint"),
    ({"name": "Not A Slug"}, "name"),
    ({"parameters": {"cluster": {"WorkerCount": "1000"}}}, "parameters"),
    ({"parameters": {"cluster": {"WorkerCount": "two"}}}, "parameters"),
    ({"parameters": {"cluster": {"NoSuchParameter": "x"}}}, "parameters"),
    ({"region": "mars-1"}, "region"),
])
def test_bad_launches_get_field_errors_and_create_nothing(world, overrides, field):
    response = _api(world.lead_a).post(CLUSTERS, _launch(world.org_a, **overrides), format="json")
    assert response.status_code == 400 and field in response.json(), response.json()
    assert not Cluster.objects.exists() and not LaunchJob.objects.exists()


def test_parameter_errors_name_the_parameter(world):
    response = _api(world.lead_a).post(CLUSTERS, _launch(world.org_a, parameters={"cluster": {"WorkerCount": "1000"}}),
                                       format="json")
    errors = response.json()["parameters"]
    assert errors["cluster__WorkerCount"] == "1000 is above the maximum 256"
    assert errors["network__AvailabilityZone"] == "is required"


def test_quota_refusal_gives_the_numbers(world, quotas):
    InstanceQuota.objects.filter(pk=quotas[1].pk).update(count=3)  # trn1.32xlarge
    response = _api(world.lead_a).post(CLUSTERS, _launch(world.org_a), format="json")
    assert response.status_code == 400
    body = response.json()
    assert (body["quota_left"], body["quota_total"], body["requested"]) == (["3"], ["3"], ["4"])
    assert "only 3 of the organization's quota of 3 are left" in str(body["quota"])
    assert not Cluster.objects.exists()


def test_delete_needs_the_name_for_a_ready_cluster_and_retry_needs_failed(world):
    cluster = ready_cluster(world.org_a, name="api-ready")
    url = reverse("clusters-api:cluster-detail", kwargs={"pk": cluster.pk})
    api = _api(world.lead_a)
    response = api.delete(url)
    assert response.status_code == 400 and "api-ready" in response.json()["confirm"]
    assert api.delete(f"{url}?confirm=another-name").status_code == 400
    response = api.post(reverse("clusters-api:cluster-retry", kwargs={"pk": cluster.pk}))
    assert response.status_code == 409, "the cluster's state refuses it, not the request's shape"
    assert "Only a failed cluster can be retried" in response.json()["state"]
    response = api.delete(f"{url}?confirm=api-ready")
    assert response.status_code == 202 and response.json()["kind"] == ClusterJobKind.DELETE
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING
    response = api.delete(f"{url}?confirm=api-ready")
    assert response.status_code == 409 and "cannot be deleted now" in response.json()["state"]
    assert cluster.jobs.filter(kind=ClusterJobKind.DELETE).count() == 1


def test_customers_cannot_retry(world):
    """Reads and deletes per role: tests/clusters/test_cluster_views.py (TestClusterApi)."""
    cluster = ready_cluster(world.org_a, name="api-ro")
    assert _api(world.customer_a).post(reverse("clusters-api:cluster-retry", kwargs={"pk": cluster.pk})).status_code == 403
    assert _api(world.customer_b).post(reverse("clusters-api:cluster-retry", kwargs={"pk": cluster.pk})).status_code == 404
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY and cluster.jobs.count() == 1


def test_pcluster_config_from_the_api(world):
    cluster = ready_cluster(world.org_a, name="api-cfg")
    response = _api(world.lead_a).get(reverse("clusters-api:cluster-pcluster-config", kwargs={"pk": cluster.pk}))
    body = response.json()
    assert response.status_code == 200 and body["filename"] == "alpha-labs-api-cfg-pcluster.yaml"
    assert "InstanceType: p5.48xlarge" in body["config"]


@pytest.mark.parametrize("name", ["clusters-api:launchjob-list", "clusters-api:stackevent-list"])
def test_job_and_event_lists_query_count_does_not_grow(world, name):
    """The cluster list: tests/clusters/test_cluster_views.py (TestClusterApi)."""

    def grow(n):
        for _ in range(n):
            cluster = launched_cluster(world.org_a, name=f"e{Cluster.objects.count()}")
            StackEventFactory(stack=cluster.stacks.first())

    api = _api(world.customer_a)
    assert_flat_queries(lambda: api.get(reverse(name)), grow=grow, sizes=(2, 8), at_most=6)
    assert api.get(reverse(name)).json()["count"] == 8
    assert _api(world.customer_b).get(reverse("clusters-api:stackevent-list")).json()["count"] == 0


def test_schema_lists_the_clusters_api(world):
    response = _api(world.pm).get(reverse("api-schema"), {"format": "json"})
    paths = response.json()["paths"]
    assert "/api/clusters/clusters/{id}/retry/" in paths and "/api/clusters/blueprints/{slug}/" in paths
    assert "post" in paths["/api/clusters/clusters/"]
