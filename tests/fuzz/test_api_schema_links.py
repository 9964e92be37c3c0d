"""What the published OpenAPI schema tells clients beyond drf-spectacular's defaults: links between
operations (followed by the fuzzer's stateful phase) and the input rules the API enforces."""
from __future__ import annotations

import re

import pytest


@pytest.fixture
def schema(client, world):
    client.force_login(world.staff)
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def _links(schema, path, method, status):
    return schema["paths"][path][method]["responses"][status].get("links", {})


def test_create_links_to_the_created_objects_operations(schema):
    links = _links(schema, "/api/workloads/workloads/", "post", "201")
    for target in ("workloads_workloads_retrieve", "workloads_workloads_update", "workloads_workloads_partial_update"):
        assert links[target] == {"operationId": target, "parameters": {"id": "$response.body#/id"}}
    listing = _links(schema, "/api/engagement/milestones/", "get", "200")
    assert listing["engagement_milestones_destroy"]["parameters"] == {"id": "$response.body#/results/0/id"}


def test_objects_link_to_their_children_and_related_objects(schema):
    cluster = _links(schema, "/api/clusters/clusters/{id}/", "get", "200")
    assert cluster["health_clusters_rotate_token_create"]["parameters"] == {"cluster_id": "$response.body#/id"}
    assert cluster["clusters_clusters_retry_create"]["parameters"] == {"id": "$request.path.id"}
    interaction = _links(schema, "/api/interactions/interactions/{id}/", "get", "200")
    assert interaction["interactions_interactions_history_create"]["parameters"] == {"id": "$request.path.id"}
    assert interaction["portal_organizations_retrieve"]["parameters"] == {"id": "$response.body#/organization"}
    # Every link names an operation that exists, with exactly its path parameters.
    operations = {op["operationId"]: op for item in schema["paths"].values() for op in item.values()
                  if isinstance(op, dict) and "operationId" in op}
    count = 0
    for item in schema["paths"].values():
        for operation in item.values():
            for response in (operation.get("responses", {}) if isinstance(operation, dict) else {}).values():
                for link in response.get("links", {}).values():
                    target = operations[link["operationId"]]
                    assert set(link["parameters"]) == {p["name"] for p in target["parameters"] if p["in"] == "path"}
                    count += 1
    assert count > 100


def test_input_rules_are_in_the_schema(schema):
    components = schema["components"]["schemas"]
    nul_free = re.compile(components["WorkloadRequest"]["properties"]["name"]["pattern"])
    assert nul_free.fullmatch("GPT-J ✓") and not nul_free.fullmatch("a\x00b")
    assert components["WorkloadRequest"]["propertyNames"]["pattern"] == nul_free.pattern
    assert components["InstanceQuotaRequest"]["properties"]["count"]["minimum"] == 1
    decimal = re.compile(components["WorkloadRequest"]["properties"]["parameters_billions"]["pattern"])
    assert decimal.fullmatch("7.5") and decimal.fullmatch(".5") and not decimal.fullmatch("") and not decimal.fullmatch("-")
    ordering = next(p for p in schema["paths"]["/api/workloads/quotas/"]["get"]["parameters"] if p["name"] == "ordering")
    assert "-count" in ordering["schema"]["items"]["enum"]
    post = schema["paths"]["/api/interactions/interactions/{id}/history/"]["post"]["responses"]
    assert "201" in post and "409" in post
