"""Syncing AWS Support cases through the embedded endpoint (moto's server over HTTP)."""
import pytest
from celery import signature
from django.urls import reverse

from portal.core import aws as portal_aws
from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions.desk.support import sync_interaction
from workloads.interactions.desk.tasks import sync_case
from workloads.interactions.models import Interaction


@pytest.fixture
def case_id(aws, world):
    """A case opened in organization A's account (through the role the portal assumes there)."""
    support = portal_aws.client("support", organization=world.org_a, region="us-east-1")
    return support.create_case(
        subject="EFA devices missing on p5.48xlarge", communicationBody="fi_info -p efa returns no provider",
        serviceCode="amazon-elastic-compute-cloud-linux", severityCode="high", categoryCode="other",
        language="en", issueType="technical",
    )["caseId"]


def test_sync_stores_status_and_communications_once(world, aws, case_id):
    obj = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id=case_id,
                             visibility="shared", severity="high")
    assert sync_interaction(obj.pk).startswith("ok, 1 new")
    obj.refresh_from_db()
    assert obj.sync_status == "ok" and obj.sync_error == "" and obj.support_status
    comms = obj.history.filter(kind="aws")
    assert comms.count() == 1 and comms.get().body == "fi_info -p efa returns no provider"
    assert sync_case.apply(args=[obj.pk]).get() == "ok, 0 new communication(s)"
    assert obj.history.filter(kind="aws").count() == 1


def test_sync_answers_to_its_old_task_name(world, aws, case_id):
    """Messages and beat rows written while the tasks were named ``workloads.support.*`` still run."""
    obj = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id=case_id)
    assert signature("workloads.support.sync_case", args=[obj.pk]).apply().get().startswith("ok, 1 new")
    assert obj.history.filter(kind="aws").count() == 1


def test_sync_of_open_cases_answers_to_its_old_task_name(world, monkeypatch):
    sent = []
    monkeypatch.setattr("portal.core.jobs.send", lambda task, *args, **options: sent.append((task.name, args)) or True)
    obj = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id="case-123456789012-2026-abcdefgh12345678")
    InteractionFactory(organization=world.org_a, kind="support_case", support_case_id="", summary="no case")
    assert signature("workloads.support.sync_open_cases").apply().get() == 1
    assert sent == [("interactions.support.sync_case", (obj.pk,))]


def test_sync_maps_aws_status_to_portal_status(world, aws, case_id):
    from workloads.interactions.choices import AWS_CASE_STATUS

    obj = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id=case_id)
    sync_interaction(obj.pk)
    obj.refresh_from_db()
    assert obj.status == AWS_CASE_STATUS[obj.support_status]
    if obj.status != "open":
        assert obj.history.filter(kind="status").exists()


def test_sync_failure_is_recorded_and_shown(client, world, aws):
    missing = "case-123456789012-2026-0123456789abcdef"
    obj = InteractionFactory(organization=world.org_a, kind="support_case", support_case_id=missing)
    assert sync_interaction(obj.pk) == "failed"
    obj.refresh_from_db()
    assert obj.sync_status == "failed" and obj.sync_error
    client.force_login(world.lead_a)
    page = client.get(obj.get_absolute_url()).content.decode()
    assert "AWS Support sync failed" in page and obj.sync_error[:30] in page


def test_unreachable_endpoint_is_a_recorded_failure(world, settings):
    settings.AWS_ENDPOINT_URL = "http://127.0.0.1:9"
    settings.AWS_MAX_ATTEMPTS = 1
    portal_aws.clear_credentials()
    obj = InteractionFactory(organization=world.org_a, support_case_id="case-123456789012-2026-0123456789abcdef")
    assert sync_interaction(obj.pk) == "failed"
    assert Interaction.objects.get(pk=obj.pk).sync_error


def test_sync_button_needs_change_permission(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared",
                             support_case_id="case-123456789012-2026-0123456789abcdef")
    client.force_login(world.customer_a)
    assert client.post(reverse("interactions:interaction_sync", args=[obj.pk])).status_code == 403
    client.force_login(world.customer_b)
    assert client.post(reverse("interactions:interaction_sync", args=[obj.pk])).status_code == 404
