"""Quota change requests: lead SAs ask, only program managers decide, the quota changes only on approval."""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from portal.core.models import TimelineEntry
from tests.clusters.factories_clusters import ClusterFactory
from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory
from workloads import history
from workloads.models import InstanceQuota, QuotaChangeRequest


@pytest.fixture
def quota(world):
    return InstanceQuotaFactory(organization=world.org_a, count=16)


def test_lead_asks_on_the_page_and_nothing_changes_yet(client, world, quota):
    client.force_login(world.lead_a)
    response = client.post(reverse("workloads:changerequest_add"), {
        "organization": world.org_a.pk, "quota": quota.pk, "requested_count": 24, "justification": "Final 400B tokens."})
    assert response.status_code == 302
    req = QuotaChangeRequest.objects.get()
    assert (req.status, req.current_count, req.requested_count, req.requested_by) == ("pending", 16, 24, world.lead_a)
    assert (req.instance_type_name, req.region) == ("p5.48xlarge", "ap-northeast-1")
    quota.refresh_from_db()
    assert quota.count == 16
    entry = TimelineEntry.objects.get(kind="quota", title__startswith="Quota change requested")
    assert entry.title == "Quota change requested: p5.48xlarge in ap-northeast-1: 16 → 24" and entry.actor == world.lead_a


def test_request_bad_input(client, world, quota):
    client.force_login(world.lead_a)
    url = reverse("workloads:changerequest_add")
    body = client.post(url, {"organization": world.org_a.pk, "quota": quota.pk, "requested_count": 0,
                             "justification": "x"}).content.decode()
    assert "Must be at least 1." in body
    body = client.post(url, {"organization": world.org_a.pk, "requested_count": 4, "justification": "new",
                             "instance_type_name": "p5.48xlarge", "region": "us-east-1", "start": "2026-05-01",
                             "end": "2026-04-01"}).content.decode()
    assert "The end date is before the start date." in body
    ClusterFactory(organization=world.org_a, name="big", node_count=12, state="ready")
    body = client.post(url, {"organization": world.org_a.pk, "quota": quota.pk, "requested_count": 8,
                             "justification": "less"}).content.decode()
    assert "hold 12 × p5.48xlarge" in body
    assert not QuotaChangeRequest.objects.exists()


@pytest.mark.parametrize(("user", "status"), [("lead_a", 403), ("customer_a", 403), ("customer_b", 404), ("lead_b", 404)])
def test_only_program_managers_decide(client, world, quota, user, status):
    req = QuotaChangeRequestFactory(quota=quota)
    client.force_login(getattr(world, user))
    response = client.post(reverse("workloads:changerequest_decide", kwargs={"pk": req.pk}), {"decision": "approve"})
    assert response.status_code == status
    req.refresh_from_db()
    quota.refresh_from_db()
    assert (req.status, quota.count) == ("pending", 16)


def test_program_manager_approves_and_the_quota_changes(client, world, quota):
    req = QuotaChangeRequestFactory(quota=quota, requested_count=24, requested_by=world.lead_a)
    client.force_login(world.pm)
    page = client.get(req.get_absolute_url()).content.decode()
    assert "Record the decision" in page
    response = client.post(reverse("workloads:changerequest_decide", kwargs={"pk": req.pk}),
                           {"decision": "approve", "comment": "Approved for the final run."})
    assert response.status_code == 302
    req.refresh_from_db()
    quota.refresh_from_db()
    assert (req.status, req.decided_by, quota.count) == ("approved", world.pm, 24)
    titles = list(TimelineEntry.objects.filter(kind="quota").values_list("title", flat=True))
    assert "Quota change approved: p5.48xlarge in ap-northeast-1: 16 → 24" in titles
    assert any(t.startswith("Quota updated:") for t in titles)  # the quota's own history entry
    quota_changes = history.entries(InstanceQuota, InstanceQuota.history.filter(id=quota.pk).select_related("history_user"))
    assert [(c.field, c.old, c.new) for c in quota_changes[0].changes] == [("count", "16", "24")]
    req_changes = history.entries(QuotaChangeRequest, QuotaChangeRequest.history.filter(id=req.pk).select_related("history_user"))
    assert {c.field for c in req_changes[0].changes} >= {"status", "decided_by", "decision_comment"}
    # a decided request cannot be decided again nor edited
    again = client.post(reverse("workloads:changerequest_decide", kwargs={"pk": req.pk}), {"decision": "reject", "comment": "no"})
    assert again.status_code == 400 and "already approved" in again.content.decode()
    client.force_login(world.lead_a)
    assert client.get(reverse("workloads:changerequest_edit", kwargs={"pk": req.pk})).status_code == 403


def test_rejection_needs_a_comment_and_leaves_the_quota(client, world, quota):
    req = QuotaChangeRequestFactory(quota=quota)
    client.force_login(world.pm)
    url = reverse("workloads:changerequest_decide", kwargs={"pk": req.pk})
    response = client.post(url, {"decision": "reject", "comment": ""})
    assert response.status_code == 400 and "Say why" in response.content.decode()
    assert client.post(url, {"decision": "reject", "comment": "Capacity is committed elsewhere."}).status_code == 302
    req.refresh_from_db()
    quota.refresh_from_db()
    assert (req.status, req.decision_comment, quota.count) == ("rejected", "Capacity is committed elsewhere.", 16)
    assert TimelineEntry.objects.filter(title__startswith="Quota change rejected").count() == 1


def test_approval_is_checked_again_against_clusters(client, world, quota):
    req = QuotaChangeRequestFactory(quota=quota, requested_count=8)
    ClusterFactory(organization=world.org_a, name="grew", node_count=12, state="ready")
    client.force_login(world.pm)
    response = client.post(reverse("workloads:changerequest_decide", kwargs={"pk": req.pk}), {"decision": "approve"})
    assert response.status_code == 400 and "hold 12 × p5.48xlarge" in response.content.decode()
    req.refresh_from_db()
    quota.refresh_from_db()
    assert (req.status, quota.count) == ("pending", 16)


def test_approving_a_request_for_a_new_quota_creates_it(world):
    from workloads import services

    req = QuotaChangeRequest(organization=world.org_a, instance_type_name="trn1.32xlarge", region="us-east-1",
                             requested_count=8, start="2026-01-01", end="2026-12-31", justification="Trainium pilot")
    req.full_clean()
    req.save()
    services.decide(req, world.pm, approve=True, comment="ok")
    quota = InstanceQuota.objects.get(instance_type_name="trn1.32xlarge")
    assert (quota.organization, quota.count, quota.region) == (world.org_a, 8, "us-east-1")


def test_api_workflow(world, quota):
    api = APIClient()
    api.force_authenticate(world.lead_a)
    response = api.post("/api/workloads/quota-requests/", {"organization": world.org_a.slug, "quota": quota.pk,
                                                           "requested_count": 32, "justification": "More."}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["instance_type"], body["current_count"], body["status"]) == ("p5.48xlarge", 16, "pending")
    url = f"/api/workloads/quota-requests/{body['id']}/decide/"
    assert api.post(url, {"decision": "approve"}, format="json").status_code == 403
    api.force_authenticate(world.customer_b)
    assert api.post(url, {"decision": "approve"}, format="json").status_code == 404
    api.force_authenticate(world.pm)
    assert api.post("/api/workloads/quota-requests/", {"organization": world.org_a.slug, "quota": quota.pk,
                                                       "requested_count": 40, "justification": "x"},
                    format="json").status_code == 403
    assert api.post(url, {"decision": "maybe"}, format="json").status_code == 400
    decided = api.post(url, {"decision": "approve", "comment": "ok"}, format="json")
    assert decided.status_code == 200 and decided.json()["status"] == "approved"
    quota.refresh_from_db()
    assert quota.count == 32
    assert api.post(url, {"decision": "approve"}, format="json").status_code == 400
    api.force_authenticate(world.lead_a)
    assert api.patch(f"/api/workloads/quota-requests/{body['id']}/", {"requested_count": 50}, format="json").status_code == 403


def test_api_request_bad_input(world, quota):
    api = APIClient()
    api.force_authenticate(world.lead_a)
    response = api.post("/api/workloads/quota-requests/", {"organization": world.org_a.slug, "requested_count": 4,
                                                           "justification": "new"}, format="json")
    assert response.status_code == 400 and {"instance_type_name", "region", "start", "end"} <= set(response.json())
    assert not QuotaChangeRequest.objects.exists()


def test_api_cannot_name_another_organizations_quota(world):
    foreign = InstanceQuotaFactory(organization=world.org_b)
    api = APIClient()
    api.force_authenticate(world.lead_a)
    response = api.post("/api/workloads/quota-requests/", {"organization": world.org_a.slug, "quota": foreign.pk,
                                                           "requested_count": 4, "justification": "x"}, format="json")
    assert response.status_code == 400 and "does not exist" in response.json()["quota"][0]


def test_program_manager_sees_use_pool_and_reservations_before_deciding(client, world, quota):
    from tests.workloads.factories_workloads import CapacityReservationFactory

    InstanceQuotaFactory(organization=world.org_b, instance_type_name=quota.instance_type_name, region=quota.region,
                         count=10)
    ClusterFactory(organization=world.org_a, name="holding", instance_type=quota.instance_type_name,
                   region=quota.region, node_count=6, state="ready")
    CapacityReservationFactory(organization=world.org_a, quota=quota, reservation_id="cr-0123456789abcdef0")
    CapacityReservationFactory(organization=world.org_b, reservation_id="cr-0fedcba9876543210")
    req = QuotaChangeRequestFactory(quota=quota, requested_count=quota.count + 8, justification="more",
                                    requested_by=world.lead_a)
    client.force_login(world.pm)
    html = client.get(req.get_absolute_url()).content.decode()
    facts = html.split('id="h-facts"', 1)[1].split("</section>", 1)[0]
    assert f"<strong>6</strong> of {quota.count}" in facts
    assert f"6 of {quota.count + 10}" in facts and "across 2 organizations" in facts
    assert f"<strong>{quota.count + 10 + 8}</strong> in quotas if approved" in facts
    assert "cr-0123456789abcdef0" in facts and "cr-0fedcba9876543210" not in facts
    client.force_login(world.lead_a)
    assert 'id="h-facts"' not in client.get(req.get_absolute_url()).content.decode()
