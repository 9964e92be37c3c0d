"""Related fields the API renders or accepts are scoped by the access policy, in the browsable API's
forms too; id filters take any integer."""
from __future__ import annotations

import pytest

from tests.workloads.factories_workloads import WorkloadFactory

BROWSABLE = ["/api/workloads/workloads/", "/api/interactions/interactions/", "/api/portal/memberships/",
             "/api/clusters/clusters/", "/api/health/validation-runs/", "/api/interactions/enablement-attendances/",
             "/api/workloads/quota-requests/"]


@pytest.mark.parametrize("path", BROWSABLE)
def test_a_customers_browsable_api_lists_no_other_organization_or_user(client, world, path):
    WorkloadFactory(organization=world.org_b, name="beta-secret-workload")
    client.force_login(world.customer_a)
    response = client.get(path, HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    page = response.content.decode()
    for foreign in ("Beta Works", "beta-works", "customer_b", "lead_b", ">staff<", ">pm<", "beta-secret-workload"):
        assert foreign not in page, f"{foreign} on {path}"


def test_naming_a_foreign_user_or_organization_is_does_not_exist(client, world):
    workload = WorkloadFactory(organization=world.org_a)
    client.force_login(world.lead_a)
    response = client.patch(f"/api/workloads/workloads/{workload.pk}/", {"lead_sa": world.lead_b.pk},
                            content_type="application/json")
    assert response.status_code == 400 and "does not exist" in str(response.json()["lead_sa"])
    response = client.patch(f"/api/workloads/workloads/{workload.pk}/", {"lead_sa": world.lead_a.pk},
                            content_type="application/json")
    assert response.status_code == 200


@pytest.mark.parametrize("value", ["0", "-1", "99999999999999999999999", "9223372036854775807"])
def test_id_filters_accept_any_integer(client, world, value):
    client.force_login(world.customer_a)
    response = client.get("/api/portal/memberships/", {"organization": value})
    assert response.status_code == 200 and response.json()["results"] == []


def test_id_filters_show_only_what_the_user_sees(client, world):
    client.force_login(world.customer_a)
    mine = client.get("/api/portal/memberships/", {"organization": world.org_a.pk}).json()["results"]
    theirs = client.get("/api/portal/memberships/", {"organization": world.org_b.pk}).json()["results"]
    assert mine and theirs == []
    assert client.get("/api/portal/memberships/", {"organization": "abc"}).status_code == 400


@pytest.mark.parametrize(("path", "foreign", "unknown"), [
    ("/api/interactions/interactions/", lambda w: w.org_b.pk, 10**9),
    ("/api/workloads/workloads/", lambda w: w.org_b.slug, "no-such-org"),
])
def test_an_invisible_organization_answers_like_an_unknown_one(client, world, path, foreign, unknown):
    """No existence oracle: another organization and one nobody has get the same answer."""
    client.force_login(world.lead_a)
    answers = []
    for value in (foreign(world), unknown):
        response = client.post(path, {"organization": value, "name": "x", "kind": "support_case", "summary": "x"},
                               content_type="application/json")
        answers.append((response.status_code, str(response.json().get("organization")).replace(str(value), "V")))
    assert answers[0] == answers[1] and answers[0][0] == 400


def test_the_schema_documents_error_answers_and_integer_id_filters(client, world):
    client.force_login(world.pm)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            codes = set(operation["responses"])
            if path != "/api/auth/token/":
                assert {"400", "401", "403"} <= codes, (method, path)
            if "{" in path:
                assert "404" in codes, (method, path)
    params = {p["name"]: p["schema"] for p in schema["paths"]["/api/portal/memberships/"]["get"]["parameters"]}
    assert params["organization"]["type"] == "integer"
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 500}
