"""Launch-day races on PostgreSQL: requests released together by a barrier, each thread on its own
database connection, through the real form, API and services.

SQLite lets one writer in at a time, so requests cannot race there; these tests skip on SQLite and
run in CI (``.ci/run``) on PostgreSQL.
"""
from __future__ import annotations

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.urls import reverse

from clusters.choices import ClusterState
from clusters.launches import service as launch
from clusters.launches.pipeline import steps as pipeline
from clusters.models import HOLDING_STATES, Cluster, LaunchJob
from tests.clusters.factories_clusters import launched_cluster
from tests.concurrency import race, signed_in
from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory
from workloads import services, usage
from workloads.models import InstanceQuota, QuotaChangeRequest

pytestmark = [pytest.mark.django_db(transaction=True)]
CLUSTERS = reverse("clusters-api:cluster-list")
LAUNCH = reverse("clusters:launch", kwargs={"slug": "parallelcluster"})


@pytest.fixture(autouse=True)
def postgres_only(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time, so requests cannot race "
                    "(CI runs these on PostgreSQL)")


def _held(org, instance_type="p5.48xlarge") -> int:
    return usage.held_for(org, instance_type, "ap-northeast-1")


def _api_body(org, name, count):
    return {"organization": org.slug, "name": name, "blueprint": "hyperpod", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"}, "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"WorkerInstanceType": "ml.p5.48xlarge", "WorkerCount": str(count)}}}


def _form(org, name, count, key=""):
    return {"organization": org.pk, "name": name, "region": "ap-northeast-1", "full_stack": "on",
            "network__AvailabilityZone": "ap-northeast-1a", "storage__LustreStorageCapacity": "2400",
            "storage__LustreThroughputPerTiB": "250", "storage__CreateHomeFileSystem": "true",
            "storage__HomeStorageCapacity": "512", "storage__HomeThroughputCapacity": "64",
            "cluster__ComputeInstanceType": "p5.48xlarge", "cluster__ComputeMinCount": "0",
            "cluster__ComputeMaxCount": str(count), "cluster__CapacityType": "ONDEMAND", "cluster__Os": "alinux2023",
            "cluster__HeadNodeInstanceType": "m5.8xlarge", "cluster__QueueName": "compute", "submission_key": key}


def _p5_quota(world, count):
    return InstanceQuotaFactory(organization=world.org_a, instance_type_name="p5.48xlarge", count=count)


def test_concurrent_api_launches_fill_the_quota_exactly_and_never_exceed_it(world):
    _p5_quota(world, 8)
    clients = signed_in(world.lead_a, 10, api=True)
    responses = race(10, lambda i: clients[i].post(CLUSTERS, _api_body(world.org_a, f"api-{i}", 2), format="json"))
    codes = Counter(r.status_code for r in responses)
    assert codes == {202: 4, 400: 6}, codes
    assert _held(world.org_a) == 8
    for refused in (r for r in responses if r.status_code == 400):
        body = refused.json()
        assert body["quota_total"] == ["8"] and body["requested"] == ["2"] and "are left" in body["quota"][0]


def test_concurrent_form_launches_fill_the_quota_exactly_and_never_exceed_it(world):
    _p5_quota(world, 9)
    clients = signed_in(world.lead_a, 10)
    responses = race(10, lambda i: clients[i].post(LAUNCH, _form(world.org_a, f"form-{i}", 3, key=f"key-{i}")))
    codes = Counter(r.status_code for r in responses)
    assert codes == {302: 3, 400: 7}, codes
    assert _held(world.org_a) == 9 and Cluster.objects.count() == 3
    for refused in (r for r in responses if r.status_code == 400):
        assert "Over quota: 3 × p5.48xlarge requested" in r_text(refused)


def r_text(response) -> str:
    return response.content.decode().replace("&#x27;", "'")


def test_a_double_submitted_form_makes_one_cluster_and_both_answers_lead_to_it(world):
    _p5_quota(world, 16)
    clients = signed_in(world.lead_a, 2)
    responses = race(2, lambda i: clients[i].post(LAUNCH, _form(world.org_a, "twice", 4, key="same-page")))
    cluster = Cluster.objects.get()
    assert [r.status_code for r in responses] == [302, 302]
    assert {r["Location"] for r in responses} == {cluster.get_absolute_url()}
    assert LaunchJob.objects.count() == 1


def test_a_click_whose_twin_commits_while_it_is_validated_answers_with_the_twins_cluster(world, client, monkeypatch):
    """The interleaving behind a double click, made to happen: the other click's launch commits while this one's
    form is being validated, so the name is taken by the time the form checks it. The page answers with the
    cluster the page made, not with "name already taken"."""
    from clusters.forms import LaunchForm

    _p5_quota(world, 16)
    client.force_login(world.lead_a)
    clean, twin = LaunchForm.clean, {}

    def clean_after_the_twin(form):
        if "cluster" not in twin:
            twin["cluster"] = None  # the twin's own form is validated by the real clean below, once
            other = LaunchForm(_form(world.org_a, "twice", 4, key="same-page"), blueprint_slug="parallelcluster",
                               user=world.lead_a)
            assert other.is_valid(), other.errors
            twin["cluster"] = launch.submit(other.launch_request()).cluster
        return clean(form)

    monkeypatch.setattr(LaunchForm, "clean", clean_after_the_twin)
    response = client.post(LAUNCH, _form(world.org_a, "twice", 4, key="same-page"))
    assert twin["cluster"] is not None and Cluster.objects.get() == twin["cluster"]
    assert response.status_code == 302 and response["Location"] == twin["cluster"].get_absolute_url()
    assert LaunchJob.objects.count() == 1


def test_a_retried_api_launch_with_its_key_makes_one_cluster_and_answers_both(world):
    _p5_quota(world, 16)
    clients = signed_in(world.lead_a, 3, api=True)
    responses = race(3, lambda i: clients[i].post(CLUSTERS, _api_body(world.org_a, "keyed", 2), format="json",
                                                  headers={"Idempotency-Key": "retry-me"}))
    assert sorted(r.status_code for r in responses) == [200, 200, 202]
    assert len({r.json()["id"] for r in responses}) == 1 and Cluster.objects.count() == 1


def test_identical_api_launches_without_a_key_never_answer_500(world):
    _p5_quota(world, 16)
    clients = signed_in(world.lead_a, 4, api=True, raise_request_exception=False)
    responses = race(4, lambda i: clients[i].post(CLUSTERS, _api_body(world.org_a, "same-name", 2), format="json"))
    assert sorted(r.status_code for r in responses) == [202, 400, 400, 400]
    for refused in (r for r in responses if r.status_code == 400):
        assert refused["Content-Type"] == "application/json"
        assert "already has a cluster named same-name" in str(refused.json()["name"])
    assert Cluster.objects.count() == 1


def test_two_approvals_of_requests_on_one_quota_cannot_both_apply(world):
    quota = _p5_quota(world, 16)
    requests = [QuotaChangeRequestFactory(quota=quota, requested_count=n) for n in (24, 20)]

    def approve(i):
        return services.decide(QuotaChangeRequest.objects.get(pk=requests[i].pk), world.pm, approve=True)

    results = race(2, approve)
    refused = [r for r in results if isinstance(r, ValidationError)]
    approved = [r for r in results if isinstance(r, QuotaChangeRequest)]
    assert len(approved) == 1 and len(refused) == 1, results
    quota.refresh_from_db()
    assert quota.count == approved[0].requested_count
    assert f"The quota is {quota.count} now, not the 16 this request was made against" in str(refused[0])
    statuses = Counter(QuotaChangeRequest.objects.values_list("status", flat=True))
    assert statuses == {"approved": 1, "pending": 1}


def test_two_approvals_cannot_together_leave_quota_below_what_clusters_hold(world):
    first, second = _p5_quota(world, 8), _p5_quota(world, 8)
    for i in range(6):
        launched_cluster(world.org_a, name=f"holds-{i}", count=2)  # 12 held of 16
    requests = [QuotaChangeRequestFactory(quota=q, requested_count=4) for q in (first, second)]

    def approve(i):
        return services.decide(QuotaChangeRequest.objects.get(pk=requests[i].pk), world.pm, approve=True)

    results = race(2, approve)
    refused = [r for r in results if isinstance(r, ValidationError)]
    assert len(refused) == 1, results
    assert "hold 12 × p5.48xlarge in ap-northeast-1; this change would leave a quota of 8 today" in str(refused[0])
    total = sum(InstanceQuota.objects.filter(organization=world.org_a).values_list("count", flat=True))
    assert total == 12 and _held(world.org_a) == 12


def test_a_delete_racing_a_pipeline_step_is_never_overwritten(world, aws):
    outcomes = Counter()
    for round_ in range(6):
        cluster = launched_cluster(world.org_a, name=f"race-{round_}", full_stack=False, blueprint="observability")
        job = cluster.jobs.get()

        def act(i, cluster=cluster, job=job):
            if i == 0:
                return pipeline.step(job.pk)
            return launch.request_delete(Cluster.objects.get(pk=cluster.pk), confirmed=True)

        step_result, delete_result = race(2, act)
        assert not isinstance(step_result, Exception), step_result
        cluster.refresh_from_db()
        if isinstance(delete_result, launch.ActionRefused):
            outcomes["step first"] += 1
            assert cluster.state in (ClusterState.CREATING, ClusterState.READY)
        else:
            assert not isinstance(delete_result, Exception), delete_result
            outcomes["delete first"] += 1
            assert cluster.state == ClusterState.DELETING  # never written over by the step
            assert not cluster.stacks.exclude(stack_id="").exists()  # the launch created nothing after it
            assert list(cluster.jobs.filter(finished__isnull=True).values_list("kind", flat=True)) == ["delete"]
    assert sum(outcomes.values()) == 6
    print(f"delete vs step: {dict(outcomes)}")


def test_held_never_exceeds_quota_when_launches_and_a_lowering_approval_race(world):
    quota = _p5_quota(world, 12)
    request = QuotaChangeRequestFactory(quota=quota, requested_count=6)
    clients = signed_in(world.lead_a, 6, api=True)

    def act(i):
        if i == 6:
            return services.decide(QuotaChangeRequest.objects.get(pk=request.pk), world.pm, approve=True)
        return clients[i].post(CLUSTERS, _api_body(world.org_a, f"mixed-{i}", 2), format="json")

    results = race(7, act)
    quota.refresh_from_db()
    held = _held(world.org_a)
    assert held <= quota.count, (held, quota.count, results[6])
    assert Cluster.objects.filter(state__in=HOLDING_STATES).count() == held // 2
