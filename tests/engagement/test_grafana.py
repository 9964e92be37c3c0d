"""A cluster's health page links to its organization's Grafana dashboards, from the observability stack's
outputs; only https endpoints are linked, and only for users who see the organization's clusters."""
import pytest
from django.urls import reverse

from clusters.models import Cluster
from portal.engagement import grafana
from tests.clusters.factories_clusters import ready_cluster

pytestmark = pytest.mark.django_db
ENDPOINT = "https://g-abc123.grafana-workspace.ap-northeast-1.amazonaws.com"


def _with_grafana(org, name, endpoint=ENDPOINT):
    """A cluster launched with the observability stack: its outputs (merged from its stacks) hold the endpoint."""
    cluster = ready_cluster(org, name=name)
    Cluster.objects.filter(pk=cluster.pk).update(outputs={**cluster.outputs, "GrafanaEndpoint": endpoint})
    return cluster


def test_health_page_links_the_organizations_grafana_dashboards(client, world):
    observability = _with_grafana(world.org_a, "alpha-obs")
    training = ready_cluster(world.org_a, name="alpha-train")
    client.force_login(world.customer_a)
    page = client.get(reverse("health:cluster_health", args=[training.pk])).content.decode()
    assert f'href="{ENDPOINT}"' in page
    assert f"{ENDPOINT}/d/geniac-gpu-health" in page and f"{ENDPOINT}/d/geniac-efa" in page and "EFA network" in page
    assert observability.organization == training.organization


def test_other_organizations_grafana_is_never_linked(world):
    _with_grafana(world.org_b, "beta-obs", "https://g-beta.grafana-workspace.ap-northeast-1.amazonaws.com")
    assert grafana.workspaces(world.customer_a, world.org_a) == []
    assert grafana.workspaces(world.customer_a, world.org_b) == []  # not theirs to see
    assert [w["host"] for w in grafana.workspaces(world.customer_b, world.org_b)] == [
        "g-beta.grafana-workspace.ap-northeast-1.amazonaws.com"]


def test_only_https_endpoints_once_each(world):
    _with_grafana(world.org_a, "one")
    _with_grafana(world.org_a, "two", ENDPOINT + "/")
    _with_grafana(world.org_a, "bad", "javascript:alert(1)")
    _with_grafana(world.org_a, "plain", "http://g-plain.example.com")
    assert [w["url"] for w in grafana.workspaces(world.lead_a, world.org_a)] == [ENDPOINT]


def test_no_observability_stack_no_links(client, world):
    cluster = ready_cluster(world.org_a, name="alpha-plain")
    client.force_login(world.lead_a)
    assert "Grafana dashboards" not in client.get(reverse("health:cluster_health", args=[cluster.pk])).content.decode()
