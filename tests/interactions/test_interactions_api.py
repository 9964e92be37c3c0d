"""The interactions API: scoped, filtered, paginated, validated, in the schema."""
import pytest
from django.urls import reverse

from portal.core.models import TimelineEntry
from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions.models import ChallengeTag, Interaction

LIST = "interactions-api:interaction-list"


def _payload(world, **overrides):
    data = {"organization": world.org_a.pk, "kind": "support_case", "summary": "NCCL over sockets",
            "body": "NCCL INFO NET/Socket", "severity": "high", "visibility": "shared",
            "tags": ["nccl-configuration"], "owner": "lead_a"}
    data.update(overrides)
    return data


def test_lead_creates_and_updates_through_the_api(client, world):
    client.force_login(world.lead_a)
    response = client.post(reverse(LIST), _payload(world), content_type="application/json")
    assert response.status_code == 201, response.content
    obj = Interaction.objects.get()
    assert obj.tags.get().slug == "nccl-configuration" and obj.owner == world.lead_a
    assert TimelineEntry.objects.filter(object_id=obj.pk).count() == 1
    response = client.patch(reverse("interactions-api:interaction-detail", args=[obj.pk]),
                            {"status": "resolved", "lesson": "Install aws-ofi-nccl"}, content_type="application/json")
    assert response.status_code == 200
    obj.refresh_from_db()
    assert obj.resolved_at is not None and obj.history.filter(kind="status").exists()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("tags", ["warp-drive"], "Unknown challenge tag “warp-drive”"),
    ("severity", "urgent", "is not a valid choice"),
    ("occurred_at", "2999-05-01T00:00:00Z", "more than a day from now"),
    ("support_case_id", "case-1", "Expected case-"),
    ("owner", "customer_a", "must be a lead SA"),
])
def test_bad_input_gets_field_errors_and_writes_nothing(client, world, field, value, message):
    client.force_login(world.lead_a)
    response = client.post(reverse(LIST), _payload(world, **{field: value}), content_type="application/json")
    assert response.status_code == 400
    assert field in response.json() and message in str(response.json()[field])
    assert not Interaction.objects.exists() and not TimelineEntry.objects.exists()


def test_a_customer_cannot_reach_an_internal_interaction(client, world):
    """Writes by each role: tests/interactions/test_interactions_views.py (TestInteractionApi)."""
    obj = InteractionFactory(organization=world.org_a, visibility="internal")
    client.force_login(world.customer_a)
    url = reverse("interactions-api:interaction-detail", args=[obj.pk])
    assert client.patch(url, {"summary": "x"}, content_type="application/json").status_code == 404


def test_customer_comments_through_the_api_but_never_internally(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared")
    client.force_login(world.customer_a)
    url = reverse("interactions-api:interaction-history", args=[obj.pk])
    response = client.post(url, {"body": "still failing", "internal": True}, content_type="application/json")
    assert response.status_code == 201 and response.json()["internal"] is False
    client.force_login(world.customer_b)
    assert client.post(url, {"body": "x"}, content_type="application/json").status_code == 404


def test_filters_and_scoping(client, world):
    nccl = ChallengeTag.objects.get(slug="nccl-configuration")
    InteractionFactory(organization=world.org_a, summary="a-open-tagged", tags=[nccl])
    InteractionFactory(organization=world.org_a, summary="a-resolved", status="resolved")
    InteractionFactory(organization=world.org_a, summary="a-internal", visibility="internal")
    InteractionFactory(organization=world.org_b, summary="b-open")
    client.force_login(world.customer_a)
    summaries = {r["summary"] for r in client.get(reverse(LIST)).json()["results"]}
    assert summaries == {"a-open-tagged", "a-resolved"}
    client.force_login(world.pm)
    assert [r["summary"] for r in client.get(reverse(LIST), {"tag": "nccl-configuration"}).json()["results"]] == [
        "a-open-tagged"]
    assert {r["summary"] for r in client.get(reverse(LIST), {"open": "true"}).json()["results"]} == {
        "a-open-tagged", "a-internal", "b-open"}
    assert client.get(reverse(LIST), {"organization": "beta-works"}).json()["count"] == 1
    assert client.get(reverse(LIST), {"limit": 2}).json()["next"] is not None


def test_timeline_api_filters_by_tag_and_date(client, world):
    from portal.core import timeline

    timeline.record(world.org_a, "interaction", "tagged", tags=["slurm", "efa-networking"])
    timeline.record(world.org_a, "interaction", "other", tags=["slurm-extra"])
    client.force_login(world.lead_a)
    rows = client.get("/api/portal/timeline/", {"tag": "slurm"}).json()["results"]
    assert [r["title"] for r in rows] == ["tagged"]
    assert client.get("/api/portal/timeline/", {"since": "2999-01-01T00:00:00Z"}).json()["results"] == []


def test_schema_lists_the_endpoints(client, world):
    client.force_login(world.pm)
    schema = client.get(reverse("api-schema"), {"format": "json"}).content.decode()
    for path in ("/api/interactions/interactions/", "/api/interactions/interactions/{id}/history/",
                 "/api/interactions/enablement-sessions/", "/api/portal/timeline/"):
        assert path in schema


def test_escalation_through_the_api(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared")
    url = reverse("interactions-api:interaction-escalate", args=[obj.pk])
    client.force_login(world.customer_b)
    assert client.post(url, {"reason": "x"}, content_type="application/json").status_code == 404
    client.force_login(world.customer_a)
    assert client.post(url, {"reason": "x"}, content_type="application/json").status_code == 403
    client.force_login(world.lead_a)
    assert client.post(url, {}, content_type="application/json").status_code == 400
    response = client.post(url, {"reason": "blocked"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["escalated_at"]
    obj.status = "resolved"
    obj.save()
    assert client.post(url, {"reason": "again"}, content_type="application/json").status_code == 400


def test_support_sync_is_scheduled_for_beat():
    from portal.celery import app

    assert app.conf.beat_schedule["sync-open-support-cases"]["task"] == "interactions.support.sync_open_cases"


def test_interaction_names_a_workload_of_its_own_organization(client, world):
    from tests.workloads.factories_workloads import WorkloadFactory

    mine = WorkloadFactory(organization=world.org_a, name="Kotoba 100B")
    theirs = WorkloadFactory(organization=world.org_b, name="Beta model")
    client.force_login(world.lead_a)
    response = client.post(reverse(LIST), _payload(world, workload=mine.pk), content_type="application/json")
    assert response.status_code == 201 and Interaction.objects.get().workload == mine
    response = client.post(reverse(LIST), _payload(world, workload=theirs.pk), content_type="application/json")
    assert response.status_code == 400 and "workload" in response.json()
    client.force_login(world.staff)  # staff sees every workload: the organization check answers
    response = client.post(reverse(LIST), _payload(world, workload=theirs.pk), content_type="application/json")
    assert response.status_code == 400 and "another organization" in str(response.json()["workload"])
    assert Interaction.objects.count() == 1


def test_full_form_offers_only_the_organizations_workloads(client, world):
    from tests.workloads.factories_workloads import WorkloadFactory

    mine = WorkloadFactory(organization=world.org_a, name="Kotoba 100B")
    WorkloadFactory(organization=world.org_b, name="BETA-WORKLOAD")
    client.force_login(world.lead_a)
    page = client.get(reverse("interactions:interaction_add")).content.decode()
    assert "Kotoba 100B" in page and "BETA-WORKLOAD" not in page
    obj = InteractionFactory(organization=world.org_a, workload=mine)
    assert "Kotoba 100B" in client.get(obj.get_absolute_url()).content.decode()
