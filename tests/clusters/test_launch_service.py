"""The launch service's rules, one request at a time: reservations, retry's quota check, idempotent
submissions, compare-and-set states, job deadlines, transient AWS answers and JSON errors.

(The same rules under concurrent requests: tests/clusters/test_launch_concurrency.py.)
"""
from __future__ import annotations

import datetime
import http.server
import threading
from datetime import timedelta

import boto3
import pytest
from botocore.config import Config
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.choices import ClusterState, JobStatus
from clusters.launches import service as launch
from clusters.launches.backend import CloudFormation
from clusters.launches.pipeline import steps as pipeline
from clusters.models import Cluster, LaunchJob, StateChanged
from clusters.tasks import sweep_launch_jobs
from portal.core.aws import translate
from tests.clusters.factories_clusters import launched_cluster
from tests.clusters.test_launch_views import _form
from tests.queries import assert_flat_queries
from tests.workloads.factories_workloads import CapacityReservationFactory
from workloads.models import InstanceQuota

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
CLUSTERS = reverse("clusters-api:cluster-list")
LAUNCH = reverse("clusters:launch", kwargs={"slug": "parallelcluster"})


def _api(user):
    api = APIClient()
    api.force_authenticate(user)
    return api


def _p5(org, name="p5-run", count=4, **cluster):
    return {"organization": org.slug, "name": name, "blueprint": "parallelcluster", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"},
                           "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"ComputeInstanceType": "p5.48xlarge", "ComputeMaxCount": str(count), **cluster}}}


# --- capacity reservations -------------------------------------------------------------------------

def test_the_api_refuses_another_organizations_reservation(world):
    theirs = CapacityReservationFactory(organization=world.org_b, reservation_id="cr-0bbbbbbbbbbbbbbb0")
    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa0")
    response = _api(world.lead_a).post(CLUSTERS, _p5(world.org_a, CapacityReservationId=theirs.reservation_id),
                                       format="json")
    assert response.status_code == 400
    message = response.json()["parameters"]["cluster__CapacityReservationId"]
    assert message.startswith(f"{theirs.reservation_id} is not a reservation of {world.org_a.name}")
    assert ours.reservation_id in message and "Beta" not in message  # offers its own, names no other
    assert not Cluster.objects.exists()


@pytest.mark.parametrize("reservation,cluster,expected", [
    ({"kind": "training_plan"}, {}, "a parallelcluster cluster takes odcr or capacity block capacity"),
    ({"instance_type_name": "trn1.32xlarge"}, {}, "reserves trn1.32xlarge, not p5.48xlarge"),
    ({"region": "us-east-1", "availability_zone": "us-east-1a"}, {}, "is in us-east-1, not ap-northeast-1"),
    ({"count": 2}, {}, "4 nodes asked, but cr-0123456789abcdef0 reserves only 2"),
    ({"start": datetime.date.today() + timedelta(days=3), "end": datetime.date.today() + timedelta(days=9)}, {},
     "is not active on"),
])
def test_each_reservation_mismatch_is_refused_with_its_reason(world, reservation, cluster, expected):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0", **reservation)
    body = _p5(world.org_a, CapacityReservationId="cr-0123456789abcdef0", **cluster)
    response = _api(world.lead_a).post(CLUSTERS, body, format="json")
    assert response.status_code == 400, response.json()
    assert expected in response.json()["parameters"]["cluster__CapacityReservationId"]
    assert not Cluster.objects.exists()


def test_a_matching_reservation_is_accepted_and_a_capacity_block_needs_its_id(world):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0", kind="capacity_block")
    api = _api(world.lead_a)
    response = api.post(CLUSTERS, _p5(world.org_a, name="no-id", CapacityType="CAPACITY_BLOCK"), format="json")
    assert response.status_code == 400
    assert "needs the capacity block's reservation id" in response.json()["parameters"]["cluster__CapacityReservationId"]
    response = api.post(CLUSTERS, _p5(world.org_a, CapacityType="CAPACITY_BLOCK",
                                      CapacityReservationId="cr-0123456789abcdef0"), format="json")
    assert response.status_code == 202, response.json()
    assert Cluster.objects.get().parameters["cluster"]["CapacityReservationId"] == "cr-0123456789abcdef0"


def test_a_capacity_block_sets_the_capacity_type_and_runs_every_node(world):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0", kind="capacity_block")
    body = _p5(world.org_a, CapacityType="ONDEMAND", CapacityReservationId="cr-0123456789abcdef0")
    response = _api(world.lead_a).post(CLUSTERS, body, format="json")
    assert response.status_code == 202, response.json()
    cluster = Cluster.objects.get().parameters["cluster"]
    assert cluster["CapacityType"] == "CAPACITY_BLOCK"
    assert cluster["ComputeMinCount"] == cluster["ComputeMaxCount"] == "4"


def test_the_form_offers_only_the_organizations_reservations_for_the_type_and_region(client, world):
    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa1")
    trn = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa2",
                                     instance_type_name="trn1.32xlarge")
    elsewhere = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa3",
                                           region="us-east-1", availability_zone="us-east-1a")
    ended = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa4",
                                       start=datetime.date.today() - timedelta(days=20),
                                       end=datetime.date.today() - timedelta(days=1))
    theirs = CapacityReservationFactory(organization=world.org_b, reservation_id="cr-0bbbbbbbbbbbbbbb1")
    client.force_login(world.lead_a)
    html = client.get(f"{LAUNCH}?organization={world.org_a.pk}&cluster__ComputeInstanceType=p5.48xlarge").content.decode()
    assert f'<option value="{ours.reservation_id}">' in html
    for other in (trn, elsewhere, ended, theirs):
        assert f'<option value="{other.reservation_id}"' not in html
    # The organization's own reservations for another type or region are named in the help, with what to choose;
    # an ended one and another organization's are not named at all.
    assert trn.reservation_id in html and elsewhere.reservation_id in html
    assert ended.reservation_id not in html and theirs.reservation_id not in html


def test_a_network_zone_outside_the_region_is_refused(world):
    body = _p5(world.org_a)
    body["parameters"]["network"]["AvailabilityZone"] = "us-east-1a"
    response = _api(world.lead_a).post(CLUSTERS, body, format="json")
    assert response.status_code == 400
    assert response.json()["parameters"]["network__AvailabilityZone"] == "us-east-1a is not in ap-northeast-1"


# --- retry checks the quota again ------------------------------------------------------------------

def test_retry_of_a_failed_cluster_is_refused_when_the_quota_is_full(world, quotas):
    InstanceQuota.objects.filter(pk=quotas[0].pk).update(count=8)
    failed = launched_cluster(world.org_a, name="failed-8", count=8)
    Cluster.objects.filter(pk=failed.pk).update(state=ClusterState.FAILED, failure_reason="stack_failed")
    launched_cluster(world.org_a, name="took-its-place", count=8)  # the quota is full again
    response = _api(world.lead_a).post(reverse("clusters-api:cluster-retry", kwargs={"pk": failed.pk}))
    assert response.status_code == 409  # the quota as it stands refuses it, not the request
    assert "8 × p5.48xlarge requested in ap-northeast-1" in response.json()["quota"]
    assert "only 0 of the organization's quota of 8 are left" in response.json()["quota"]
    failed.refresh_from_db()
    assert failed.state == ClusterState.FAILED and failed.jobs.count() == 1
    Cluster.objects.filter(name="took-its-place").update(state=ClusterState.DELETED)
    assert _api(world.lead_a).post(reverse("clusters-api:cluster-retry", kwargs={"pk": failed.pk})).status_code == 202
    failed.refresh_from_db()
    assert failed.state == ClusterState.SCHEDULED


def test_another_organizations_lead_cannot_retry_or_delete_through_the_service(world):
    cluster = launched_cluster(world.org_a, name="not-yours")
    Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.FAILED)
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        launch.request_retry(cluster, user=world.lead_b)
    with pytest.raises(PermissionDenied):
        launch.request_delete(cluster, user=world.lead_b, confirmed=True)
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED


# --- idempotent submissions ------------------------------------------------------------------------

def test_an_api_launch_repeated_with_its_idempotency_key_answers_with_the_first_cluster(world):
    api = _api(world.lead_a)
    first = api.post(CLUSTERS, _p5(world.org_a), format="json", headers={"Idempotency-Key": "k-1"})
    again = api.post(CLUSTERS, _p5(world.org_a), format="json", headers={"Idempotency-Key": "k-1"})
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["id"] == first.json()["id"] and again.json()["name"] == "p5-run"
    assert Cluster.objects.count() == 1 and LaunchJob.objects.count() == 1
    other = api.post(CLUSTERS, _p5(world.org_a, name="other"), format="json", headers={"Idempotency-Key": "k-1"})
    assert other.status_code == 409 and "was used for the launch of p5-run" in other.json()["detail"]
    # The key is per organization: organization B's lead may use the same one.
    InstanceQuota.objects.create(organization=world.org_b, instance_type_name="p5.48xlarge", region="ap-northeast-1",
                                 count=4, start=datetime.date.today(), end=datetime.date.today() + timedelta(days=9))
    theirs = _api(world.lead_b).post(CLUSTERS, _p5(world.org_b), format="json", headers={"Idempotency-Key": "k-1"})
    assert theirs.status_code == 202 and theirs.json()["id"] != first.json()["id"]


def test_a_repeated_api_launch_without_a_key_gets_a_json_field_error_not_a_500(world):
    api = _api(world.lead_a)
    assert api.post(CLUSTERS, _p5(world.org_a), format="json").status_code == 202
    again = api.post(CLUSTERS, _p5(world.org_a), format="json")
    assert again.status_code == 400 and again["Content-Type"] == "application/json"
    assert again.json()["name"] == [f"{world.org_a.name} already has a cluster named p5-run."]


def test_a_double_submitted_form_makes_one_cluster_and_redirects_the_second_to_it(client, world):
    client.force_login(world.lead_a)
    html = client.get(LAUNCH).content.decode()
    key = html.split('name="submission_key" value="', 1)[1].split('"', 1)[0]
    assert len(key) == 32
    first = client.post(LAUNCH, _form(world.org_a, submission_key=key))
    second = client.post(LAUNCH, _form(world.org_a, submission_key=key), follow=True)
    cluster = Cluster.objects.get()
    assert first.status_code == 302 and first["Location"] == cluster.get_absolute_url()
    assert second.redirect_chain[-1][0] == cluster.get_absolute_url()
    assert "This launch was already submitted: p5-train." in second.content.decode()
    assert LaunchJob.objects.count() == 1


def test_submit_under_an_existing_key_returns_the_first_cluster(world):
    request = launch.LaunchRequest(organization=world.org_a, name="svc", blueprint="parallelcluster",
                                   region="ap-northeast-1", parameters=_p5(world.org_a)["parameters"],
                                   full_stack=True, user=world.lead_a, key="same")
    first = launch.submit(request)
    second = launch.submit(launch.LaunchRequest(**{**request.__dict__, "name": "svc"}))
    assert first.created and not second.created and second.cluster.pk == first.cluster.pk


def test_api_errors_the_views_do_not_answer_are_json():
    from portal.core.api.errors import exception_handler

    conflict = exception_handler(IntegrityError("duplicate key value violates unique constraint"), {})
    assert conflict.status_code == 409 and "conflicts with a change made at the same time" in conflict.data["detail"]
    crash = exception_handler(RuntimeError("secret internals"), {})
    assert crash.status_code == 500 and "secret" not in str(crash.data)


# --- compare-and-set states ------------------------------------------------------------------------

def test_a_stale_copy_never_overwrites_a_newer_state(world):
    cluster = launched_cluster(world.org_a, name="cas")
    stale = Cluster.objects.get(pk=cluster.pk)  # a worker's copy, read while scheduled
    launch.request_delete(cluster, confirmed=True)  # meanwhile: scheduled → deleting
    with pytest.raises(StateChanged):
        stale.transition(ClusterState.CREATING)
    assert stale.state == ClusterState.DELETING  # reloaded, so the caller decides again
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING


def test_a_launch_step_that_lost_to_a_delete_stops_and_leaves_the_delete(world, aws):
    cluster = launched_cluster(world.org_a, name="raced")
    launch_job = cluster.jobs.get()
    launch.request_delete(cluster, confirmed=True)
    assert pipeline.step(launch_job.pk) == pipeline.DONE  # cancelled: claims nothing
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING


def test_a_launch_job_failing_never_fails_a_cluster_a_delete_took_over(world):
    cluster = launched_cluster(world.org_a, name="owned")
    job = cluster.jobs.get()
    Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.DELETING)
    pipeline._fail(job, cluster, "boom", "error")
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING and job.status == JobStatus.FAILED


# --- deadlines, superseded chains, transient AWS answers ---------------------------------------------

def test_a_job_past_its_deadline_fails_the_cluster_with_the_reason(world, aws):
    cluster = launched_cluster(world.org_a, name="late")
    job = cluster.jobs.get()
    assert job.deadline is not None and job.deadline > timezone.now() + timedelta(hours=3)
    LaunchJob.objects.filter(pk=job.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert pipeline.step(job.pk) == pipeline.DONE
    cluster.refresh_from_db()
    job.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "deadline"
    assert "did not finish within its deadline" in cluster.error_message and job.status == JobStatus.FAILED


def test_the_sweep_fails_a_job_past_its_deadline_that_no_worker_steps(world):
    cluster = launched_cluster(world.org_a, name="orphan")
    LaunchJob.objects.filter(cluster=cluster).update(deadline=timezone.now() - timedelta(seconds=1), dispatched_at=timezone.now())
    sweep_launch_jobs()
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "deadline"
    assert cluster.jobs.get().finished is not None


def test_a_message_from_before_the_latest_send_claims_nothing(world, aws):
    cluster = launched_cluster(world.org_a, name="chains")
    job = cluster.jobs.get()
    LaunchJob.objects.filter(pk=job.pk).update(attempts=2)  # the sweep sent it again
    assert pipeline.step(job.pk, attempt=1) == pipeline.DONE
    job.refresh_from_db()
    assert job.polls == 0 and job.started is None
    pipeline.step(job.pk, attempt=2)  # the latest send's message steps it
    job.refresh_from_db()
    assert job.polls == 1 and job.started is not None


class _NotAws(http.server.BaseHTTPRequestHandler):
    """A proxy in front of AWS answering 503 with a body that is neither XML nor an HTML page."""

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"upstream connect error or disconnect/reset before headers"
        self.send_response(503)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_5xx_answer_botocore_cannot_parse_is_retried_not_fatal(world, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotAws)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cf_client = boto3.client("cloudformation", region_name="ap-northeast-1", aws_access_key_id="x",
                                 aws_secret_access_key="x", endpoint_url=f"http://127.0.0.1:{server.server_port}",
                                 config=Config(retries={"mode": "standard", "max_attempts": 1}))
        monkeypatch.setattr(pipeline, "cloudformation_for", lambda cluster: CloudFormation(client=cf_client))
        cluster = launched_cluster(world.org_a, name="proxy", full_stack=False, blueprint="observability")
        job = cluster.jobs.get()
        assert pipeline.step(job.pk) == pipeline.POLL
        job.refresh_from_db()
        cluster.refresh_from_db()
        assert job.aws_errors == 1 and "retrying, 1 in a row" in job.log and job.finished is None
        assert cluster.state == ClusterState.CREATING
    finally:
        server.shutdown()


def test_response_parser_errors_translate_as_retryable():
    from botocore.parsers import ResponseParserError

    error = translate(ResponseParserError("Unable to parse response (not well-formed), invalid XML received.\nbody"))
    assert error.retryable and error.code == "ResponseParserError" and "\n" not in str(error)


def test_a_launchs_queries_do_not_grow_with_the_organizations_clusters(world):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0")
    api = _api(world.lead_a)

    def grow(n):
        for _ in range(n):
            launched_cluster(world.org_a, name=f"existing-{Cluster.objects.count()}", count=1)

    def launch():
        name = f"p5-run-{Cluster.objects.count()}"
        response = api.post(CLUSTERS, _p5(world.org_a, name=name, count=1, CapacityReservationId="cr-0123456789abcdef0"),
                            format="json", headers={"Idempotency-Key": name})
        assert response.status_code == 202, response.json()

    # checks, lock, rows, timeline, submission key, the organization looked up through the policy: 31 on PostgreSQL
    assert_flat_queries(launch, grow=grow, sizes=(2, 8), at_most=31)
