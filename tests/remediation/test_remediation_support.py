"""An escalated remediation opens an AWS Support case with its evidence (``CreateCase`` through the organization's
role, against the embedded endpoint): once, linked from the action and the escalation; throttling retried with
backoff, and a refusal (no support plan) kept on the interaction in the portal's words."""
from __future__ import annotations

import time

import pytest
from celery import signature
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from clusters.remediation import services, verification
from clusters.remediation.models import RemediationAction
from portal.core import aws as portal_aws
from sandbox.aws import moto_support, moto_throttle
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, hyperpod_cluster
from workloads.interactions.desk import support, tasks
from workloads.interactions.models import Interaction


def _escalated(world) -> RemediationAction:
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    verification.escalate(action, f"{FAULTY} failed 2 replacements")
    action.refresh_from_db()
    assert action.escalation is not None
    return action


def _case(world, case_id: str) -> dict:
    client = portal_aws.client("support", organization=world.org_a, region=support.SUPPORT_REGION)
    return client.describe_cases(caseIdList=[case_id], includeCommunications=True)["cases"][0]


def _open(action) -> str:
    interaction = action.escalation.interaction
    return tasks.open_case_task.apply(args=[interaction.pk, "subject", action.escalation.question,
                                              "amazon-elastic-compute-cloud-linux", "instance-issue"]).get()


@pytest.mark.worker
def test_an_escalated_action_opens_one_support_case_with_its_evidence_on_a_real_worker(world, celery_worker_process,
                                                                                        client):
    action = _escalated(world)
    with pytest.raises(PermissionDenied):
        services.open_support_case(action, world.customer_a)
    assert services.open_support_case(action, world.lead_a) is True
    interaction = action.escalation.interaction
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not Interaction.objects.get(pk=interaction.pk).sync_status:  # opened, synced
        time.sleep(0.3)
    interaction.refresh_from_db()
    assert interaction.support_case_id.startswith("case-"), interaction.sync_error
    case = _case(world, interaction.support_case_id)
    assert case["subject"].startswith(f"Repeated GPU fault on {FAULTY}")
    body = case["recentCommunications"]["communications"][0]["body"]
    assert "Fault history:" in body and "XID 79" in body and "Actions taken:" in body
    assert interaction.sync_status == "ok" and interaction.support_status
    assert services.open_support_case(action, world.lead_a) is False  # once per escalation
    client.force_login(world.lead_a)
    page = client.get(action.get_absolute_url()).content.decode()
    assert interaction.support_case_id in page and "Open an AWS Support case" not in page
    escalation_page = client.get(action.escalation.get_absolute_url()).content.decode()
    assert interaction.support_case_id in escalation_page
    client.force_login(world.customer_a)
    assert interaction.support_case_id not in client.get(action.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_throttled_create_case_is_retried_then_given_up_in_the_portals_words(world, aws, settings):
    settings.AWS_MAX_ATTEMPTS = 0  # botocore's own retries off: the task's backoff is under test
    action = _escalated(world)
    moto_throttle.throttle("CreateCase", 2)
    case_id = _open(action)
    interaction = Interaction.objects.get(pk=action.escalation.interaction_id)
    assert interaction.support_case_id == case_id and _case(world, case_id)["caseId"] == case_id
    assert _open(action) == case_id  # a repeat keeps the case: CreateCase is not called again

    other = _escalated_again(world)
    moto_throttle.throttle("CreateCase", tasks.OPEN_CASE_RETRIES + 1)
    assert _open(other) == "failed"
    interaction = Interaction.objects.get(pk=other.escalation.interaction_id)
    assert (interaction.support_case_id, interaction.sync_status) == ("", "failed")
    assert interaction.sync_error.startswith("AWS Support slowed down the portal's requests")
    moto_throttle.throttle("CreateCase", 0)


def _escalated_again(world) -> RemediationAction:
    cluster = hyperpod_cluster(world.org_a, name="hp-fix-2", in_endpoint=False)
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    verification.escalate(action, f"{FAULTY} failed 2 replacements")
    action.refresh_from_db()
    return action


@pytest.mark.django_db
def test_a_case_opened_under_the_old_task_name_is_opened_once(world, aws):
    """A message queued while the task was named ``workloads.support.open_case`` still opens the case."""
    action = _escalated(world)
    interaction = action.escalation.interaction
    case_id = signature("workloads.support.open_case", args=[
        interaction.pk, "subject", action.escalation.question, "amazon-elastic-compute-cloud-linux", "instance-issue",
    ]).apply().get()
    interaction.refresh_from_db()
    assert case_id.startswith("case-") and interaction.support_case_id == case_id
    assert _open(action) == case_id


@pytest.mark.django_db
def test_an_account_without_a_support_plan_is_told_so_and_nothing_is_linked(world, aws, client):
    action = _escalated(world)
    moto_support.without_plan(world.org_a.aws_account_id)
    try:
        assert _open(action) == "failed"
    finally:
        moto_support.without_plan(world.org_a.aws_account_id, missing=False)
    interaction = Interaction.objects.get(pk=action.escalation.interaction_id)
    assert interaction.support_case_id == "" and interaction.sync_status == "failed"
    assert interaction.sync_error.startswith("AWS Support needs a Business or Enterprise support plan")
    assert "SubscriptionRequiredException" in interaction.sync_error
    client.force_login(world.lead_a)
    page = client.get(action.get_absolute_url()).content.decode()
    assert "AWS Support needs a Business or Enterprise support plan" in page
    assert "Open an AWS Support case" in page  # it may be tried again once the plan is there
    response = client.post(reverse("remediation:action_support_case", kwargs={"pk": action.pk}))
    assert response.status_code == 302
