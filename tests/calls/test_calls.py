"""Calls, applications, reviews and the award: the conflict-of-interest rule in pages, API and exports, drafts and
frozen versions, the award checked against the call's offer and against AWS's offerings (the embedded endpoint),
and awards carried into the next cycle's quotas."""
from __future__ import annotations

import datetime

import botocore.session
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from portal.core.models import Membership
from portal.engagement import cycles
from portal.engagement.calls import services
from portal.engagement.calls.models import Application, ApplicationVersion, ReviewAssignment
from sandbox.aws import moto_offerings
from tests.calls.conftest import line
from tests.factories import UserFactory
from workloads.models import InstanceQuota

ACCOUNT = "123456789012"  # the embedded endpoint's account: the program's role is unset in tests


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _routes(application, assignment) -> list[tuple[str, str]]:
    """Every route that shows the application's content: the page, its workbook, the API and the review."""
    pk = {"pk": application.pk}
    return [("page", reverse("calls:application_detail", kwargs=pk)),
            ("export", reverse("calls:application_export", kwargs=pk)),
            ("api", reverse("calls-api:application-detail", kwargs=pk)),
            ("api", reverse("calls-api:application-versions", kwargs=pk)),
            ("page", reverse("calls:review_edit", kwargs={"pk": assignment.pk})),
            ("api", reverse("calls-api:review-detail", kwargs={"pk": assignment.pk}))]


def _statuses(user, routes) -> list[int]:
    page, api = _client(user), _api(user)
    return [(api if kind == "api" else page).get(url).status_code for kind, url in routes]


def test_a_reviewer_sees_an_assigned_application_until_declaring_a_conflict_then_404_everywhere(world, program):
    application = program.apply(world.org_a, world.customer_a, [line(4)])
    reviewer = UserFactory(username="outside_reviewer")
    assignment = services.assign(application, reviewer, world.pm)
    routes = _routes(application, assignment)
    assert _statuses(reviewer, routes) == [200] * len(routes)

    api = _api(reviewer)
    assert api.post(reverse("calls-api:review-conflict", kwargs={"pk": assignment.pk}),
                    {"note": "former employer"}, format="json").status_code == 204

    assert _statuses(reviewer, routes) == [404] * len(routes)
    assert not Application.objects.restrict(reviewer).exists()
    lists = [_client(reviewer).get(reverse("calls:application_list")), api.get(reverse("calls-api:application-list"))]
    assert all("Alpha Labs" not in r.content.decode() for r in lists)


def test_a_reviewer_who_belongs_to_the_applicant_is_never_assigned_nor_shown_it_as_a_reviewer(world, program):
    """lead_b leads organization B, which applies too: assigning them to B's application is refused, and an
    assignment written past the service (an import, the admin) still shows them nothing as a reviewer."""
    own = program.apply(world.org_b, world.customer_b, [line(2)])
    other = program.apply(world.org_a, world.customer_a, [line(4)])
    with pytest.raises(services.CallError):
        services.assign(own, world.lead_b, world.pm)
    smuggled = ReviewAssignment.objects.create(application=own, reviewer=world.lead_b)
    member = UserFactory(username="member_reviewer")
    Membership.objects.create(user=member, organization=world.org_a, role="customer")
    planted = ReviewAssignment.objects.create(application=other, reviewer=member)

    assert _statuses(world.lead_b, _routes(own, smuggled))[-2:] == [404, 404]  # the review: never theirs
    assert not ReviewAssignment.objects.restrict(world.lead_b).exists()
    assert not ReviewAssignment.objects.restrict(member).filter(pk=planted.pk).exists()
    # As a reviewer, lead_b reaches nothing of A's; their own organization's application they read as its lead.
    assert _statuses(world.lead_b, _routes(other, planted))[:4] == [404, 404, 404, 404]


def test_submitting_freezes_a_version_and_a_late_edit_needs_the_program_manager(world, program):
    application = program.apply(world.org_a, world.customer_a, [line(4)], submit=False)
    edit = reverse("calls:application_edit", kwargs={"pk": application.pk})
    client = _client(world.customer_a)
    assert client.get(edit).status_code == 200
    assert client.post(reverse("calls:application_submit", kwargs={"pk": application.pk})).status_code == 302
    version = ApplicationVersion.objects.get(application=application)
    assert version.number == 1 and version.content["requested"] == [line(4)]
    assert version.content_hash == services.content_hash(version.content)

    assert client.get(edit).status_code == 403  # submitted: frozen
    assert _api(world.customer_a).patch(reverse("calls-api:application-detail", kwargs={"pk": application.pk}),
                                        {"data_plan": "late"}, format="json").status_code == 403
    assert client.post(reverse("calls:application_reopen", kwargs={"pk": application.pk})).status_code == 403
    assert _client(world.pm).post(reverse("calls:application_reopen", kwargs={"pk": application.pk})).status_code == 302
    assert _api(world.customer_a).patch(reverse("calls-api:application-detail", kwargs={"pk": application.pk}),
                                        {"data_plan": "late"}, format="json").status_code == 200
    services.submit(application, world.customer_a)
    versions = list(ApplicationVersion.objects.filter(application=application).order_by("number"))
    assert [v.number for v in versions] == [1, 2] and versions[1].content["data_plan"] == "late"
    assert versions[0].content["data_plan"] == ""  # the first version did not move
    reasons = list(application.history.exclude(history_change_reason=None).values_list("history_change_reason",
                                                                                       flat=True))
    assert {"Submitted as version 1", "Reopened for a late edit", "Submitted as version 2"} <= set(reasons)


def test_a_new_application_starts_from_the_organizations_record_of_the_current_cycle(world, program):
    from portal.engagement.models import Milestone, TrainedModel
    from tests.workloads.factories_workloads import WorkloadFactory

    WorkloadFactory(organization=world.org_a, target_instance_type="p5.48xlarge", target_instance_count=16)
    Milestone.objects.create(organization=world.org_a, cycle=program.cycle, kind="onboarded",
                             reached_on=datetime.date(2026, 7, 10))
    TrainedModel.objects.create(organization=world.org_a, cycle=program.cycle, name="alpha-7b", parameters_billions=7,
                                instance_type="p5.48xlarge", instance_count=16)
    response = _client(world.lead_a).post(reverse("calls:application_start", kwargs={
        "pk": program.call.pk, "org": world.org_a.slug}))
    application = Application.objects.get(call=program.call, organization=world.org_a)
    assert response["Location"] == application.get_absolute_url()
    record = application.record
    assert record["cycle"] == "Cycle 7" and record["workload"]["instance_count"] == 16
    assert [m["kind"] for m in record["milestones"]] == ["onboarded"]
    assert [t["name"] for t in record["trained_models"]] == ["alpha-7b"]
    assert set(record["hours"]) == {"reserved", "held", "healthy", "busy"} and "goodput" in record
    assert application.parameters_billions is not None  # the form starts from the workload record
    page = _client(world.customer_a).get(application.get_absolute_url()).content.decode()
    assert "alpha-7b" in page


def test_the_award_is_refused_when_it_exceeds_the_calls_offer_and_nothing_is_written(world, program):
    a = program.apply(world.org_a, world.customer_a, [line(12)])
    b = program.apply(world.org_b, world.customer_b, [line(8)])
    with pytest.raises(services.CallError, match="exceeds the call's offer"):
        services.award(program.call, {a.pk: [line(12)], b.pk: [line(8)]}, world.pm)
    with pytest.raises(services.CallError, match="more"):  # more than it asked
        services.award(program.call, {a.pk: [line(14)], b.pk: []}, world.pm)
    assert not InstanceQuota.objects.exists()
    assert set(Application.objects.values_list("status", flat=True)) == {"submitted"}


def test_the_award_is_checked_against_aws_offerings_through_the_embedded_endpoint(world, program, aws):
    """boto3 validates every request against botocore's model before sending it, and the endpoint answers both
    operations: the award goes through only when EC2 or SageMaker offers the capacity."""
    model_ec2 = botocore.session.get_session().get_service_model("ec2")
    model_sagemaker = botocore.session.get_session().get_service_model("sagemaker")
    assert "DescribeCapacityBlockOfferings" in model_ec2.operation_names
    assert "SearchTrainingPlanOfferings" in model_sagemaker.operation_names
    a = program.apply(world.org_a, world.customer_a, [line(8), line(8, instance_type="trn1.32xlarge")])
    b = program.apply(world.org_b, world.customer_b, [line(8)])
    decisions = {a.pk: [line(8), line(4, instance_type="trn1.32xlarge")], b.pk: [line(4)]}

    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "p5.48xlarge", 10)  # 12 awarded: AWS has 10
    with pytest.raises(services.CallError, match="AWS offers no Capacity Block or training plan of 12"):
        services.award(program.call, decisions, world.pm)
    assert not InstanceQuota.objects.exists()

    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "p5.48xlarge", 12)
    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "trn1.32xlarge", 0, service="ec2")  # HyperPod only
    response = _api(world.pm).post(reverse("calls-api:call-award", kwargs={"pk": program.call.pk}),
                                   {"decisions": {str(k): v for k, v in decisions.items()}}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"quotas": 3, "reservation_requests": 3, "awarded": 2, "declined": 0}
    a.refresh_from_db()
    sources = {r["instance_type"]: r["source"] for r in a.awarded}
    assert sources == {"p5.48xlarge": "capacity_block", "trn1.32xlarge": "training_plan"}
    assert all(r["offering_id"].startswith(("cb-", "tpo-")) for r in a.awarded)
    quotas = list(InstanceQuota.objects.filter(organization=world.org_a).order_by("instance_type_name"))
    assert [(q.instance_type_name, q.count, q.start, q.end) for q in quotas] == [
        ("p5.48xlarge", 8, datetime.date(2027, 1, 4), datetime.date(2027, 1, 31)),
        ("trn1.32xlarge", 4, datetime.date(2027, 1, 4), datetime.date(2027, 1, 31))]
    program.call.refresh_from_db()
    assert program.call.status == "awarded"


def test_awarded_quotas_are_carried_into_the_next_cycle_when_it_starts(world, program, aws):
    a = program.apply(world.org_a, world.customer_a, [line(8)])
    services.award(program.call, {a.pk: [line(8)]}, world.pm)
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk, world.org_b.pk], starts_on=datetime.date(2027, 1, 4),
                            today=datetime.date(2027, 1, 4))
    quota = InstanceQuota.objects.get(organization=world.org_a)
    assert quota.cycle_id == nxt.pk and quota.count == 8


def test_a_declined_applicant_reads_the_reviewers_summary_never_their_names(world, program, aws):
    a = program.apply(world.org_a, world.customer_a, [line(8)])
    reviewer = UserFactory(username="reviewer_tanaka", first_name="Hiroshi", last_name="Tanaka")
    assignment = services.assign(a, reviewer, world.pm)
    services.score(assignment, reviewer, {"Impact": 2, "Record": 1}, "internal: weak", "Plan lacks a data pipeline.")
    services.award(program.call, {a.pk: []}, world.pm, note="Apply again next cycle.")
    page = _client(world.customer_a).get(a.get_absolute_url()).content.decode()
    assert "Plan lacks a data pipeline." in page and "Apply again next cycle." in page
    assert "Tanaka" not in page and "reviewer_tanaka" not in page and "internal: weak" not in page
    org_page = _client(world.customer_a).get(reverse("portal:organization_detail", kwargs={"slug": world.org_a.slug}))
    assert program.call.title in org_page.content.decode()


def test_the_board_shows_scores_side_by_side_and_what_is_asked_against_the_offer(world, program):
    a = program.apply(world.org_a, world.customer_a, [line(12)])
    b = program.apply(world.org_b, world.customer_b, [line(8)])
    first, second = UserFactory(username="r1"), UserFactory(username="r2")
    for application, scores in ((a, (5, 2)), (b, (3, 3))):
        for reviewer, score in zip((first, second), scores, strict=True):
            assignment = services.assign(application, reviewer, world.pm)
            services.score(assignment, reviewer, {"Impact": score, "Record": 4}, "", "")
    response = _client(world.pm).get(reverse("calls:call_board", kwargs={"pk": program.call.pk}))
    rows = {r["application"].pk: r for r in response.context["rows"]}
    assert rows[a.pk]["mean"] == round((14 / 3 + 8 / 3) / 2, 2)
    over = {c["instance_type"]: c["over"] for c in response.context["comparison"]}
    assert over["p5.48xlarge"] == (12 + 8 - 16) * 4  # instance-weeks asked beyond the offer
    with pytest.raises(Exception, match="Score every criterion"):
        services.score(ReviewAssignment.objects.filter(reviewer=first).first(), first, {"Impact": 3}, "", "")


def test_applicants_are_told_in_their_language_and_the_award_page_says_why_it_refuses(
        world, program, aws, caplog, django_capture_on_commit_callbacks):
    from portal.core.models import User

    User.objects.filter(pk=world.customer_a.pk).update(language="ja")
    a = program.apply(world.org_a, world.customer_a, [line(8)])
    b = program.apply(world.org_b, world.customer_b, [line(8)])
    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "p5.48xlarge", 4)
    url = reverse("calls:call_award", kwargs={"pk": program.call.pk})
    refused = _client(world.pm).post(url, {f"award_{a.pk}": "8 p5.48xlarge ap-northeast-1 4", f"award_{b.pk}": ""})
    assert refused.status_code == 400 and "AWS offers no Capacity Block" in refused.content.decode()
    assert not InstanceQuota.objects.exists()

    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "p5.48xlarge", 8)
    with caplog.at_level("INFO", logger="portal.core.notifications"), django_capture_on_commit_callbacks(execute=True):
        done = _client(world.pm).post(url, {f"award_{a.pk}": "8 p5.48xlarge ap-northeast-1 4", f"award_{b.pk}": ""})
    assert done.status_code == 302
    told = [r.getMessage() for r in caplog.records if "call_decision" in r.getMessage()]
    assert len(told) == 2
    assert any("採択" in m and f"'organization_id': {world.org_a.pk}" in m for m in told)  # A reads Japanese
    assert any("not awarded this time" in m and f"'organization_id': {world.org_b.pk}" in m for m in told)


def test_an_application_of_an_archived_cycles_call_is_read_only(world, program):
    application = program.apply(world.org_a, world.customer_a, [line(4)], submit=False)
    program.cycle.status = "archived"
    program.cycle.save(update_fields=["status"])
    client = _client(world.customer_a)
    assert client.get(application.get_absolute_url()).status_code == 200
    assert client.get(reverse("calls:application_edit", kwargs={"pk": application.pk})).status_code == 403
    assert client.post(reverse("calls:application_submit", kwargs={"pk": application.pk})).status_code == 403
    assert not ApplicationVersion.objects.exists()
