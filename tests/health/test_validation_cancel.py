"""Cancelling a validation (the page and the API; ``scancel`` through SSM on the emulated head node; a cancel racing
the job's own finish leaves one final state) and the timeout asking ``sacct`` why a job never reported."""
from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.health.models import ValidationJob, ValidationRun
from clusters.health.validation import headnode
from clusters.health.validation import service as validation
from portal.core.models import TimelineEntry
from sandbox.aws import moto_headnode, moto_sbatch
from tests import concurrency
from tests.health.factories_health import ClusterFactory, sample
from tests.health.test_validation_jobs import HOSTS, pcluster, reported, step_until_submitted, wait


def emulated(job):
    """The emulated head node's view of the job's cluster (its Slurm jobs)."""
    cluster = job.cluster
    found = moto_headnode.cluster_of(cluster.organization.aws_account_id, cluster.region, job.target)
    assert found is not None, job.target
    return found


def slurm_job(job) -> dict:
    return moto_sbatch._jobs(emulated(job))[job.slurm_job_id]


def run_cancel(job, limit: int = 10) -> ValidationJob:
    for _ in range(limit):
        if validation.cancel_step(job.pk)[0] == validation.DONE:
            break
    job.refresh_from_db()
    return job


def submitted(world, monkeypatch, settings, hosts=HOSTS[:2], seconds=600, name="pc-val"):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", seconds)
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, name=name, hosts=hosts)
    job, _ = validation.start(cluster, actor=world.lead_a)
    job = step_until_submitted(job)
    assert job.state == "submitted" and job.slurm_job_id, job.error
    return job


# --- cancel ----------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_api_cancels_a_running_job_and_scancel_stops_it_before_it_posts(world, aws, settings, monkeypatch):
    job = submitted(world, monkeypatch, settings, seconds=1.5)
    api = APIClient()
    api.force_authenticate(world.customer_a)  # the customer who may start one may cancel it
    answered = api.post(f"/api/health/validations/{job.pk}/cancel/")
    assert answered.status_code == 200, answered.content
    body = answered.json()
    assert body["state"] == "cancelled" and body["cancelled_by"] and body["cancelled_at"]
    job.refresh_from_db()
    assert (job.state, job.cancelled_by, job.token_hash) == ("cancelled", world.customer_a, "")
    assert job.finished_at is not None and job.cancelled_at is not None
    job = run_cancel(job)
    assert job.scancel == f"scancel {job.slurm_job_id}: done.", job.scancel
    time.sleep(2.0)  # past the emulated job's run time: it never posted (a post would have ended it FAILED)
    assert slurm_job(job)["state"] == "CANCELLED"
    state = validation.parse_sacct(headnode_sacct(job), job.slurm_job_id)
    assert state.state == "CANCELLED by 0"
    assert ValidationRun.objects.filter(job=job).count() == 0
    assert TimelineEntry.objects.filter(organization=world.org_a, title__endswith="validation (all_reduce) cancelled").exists()
    again = api.post(f"/api/health/validations/{job.pk}/cancel/")
    assert again.status_code == 409 and "already cancelled" in again.json()["detail"]


def headnode_sacct(job) -> str:
    command_id = headnode.send(job.cluster, job.target, [f"sacct -j {job.slurm_job_id} -X -n -P -o {validation.SACCT_FORMAT}"])
    for _ in range(20):
        result = headnode.invocation(job.cluster, job.target, command_id)
        if result.finished:
            return result.stdout
        time.sleep(0.2)
    raise AssertionError("sacct did not finish")


@pytest.mark.django_db
def test_the_page_cancels_with_htmx_and_another_organizations_user_is_refused(world, client, settings):
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster"))
    job, _ = validation.start(cluster, actor=world.customer_a)
    client.force_login(world.lead_b)
    assert client.post(f"/validations/{job.pk}/cancel/").status_code == 404
    client.force_login(world.pm)
    assert client.post(f"/validations/{job.pk}/cancel/").status_code == 403
    job.refresh_from_db()
    assert job.state == "pending"
    client.force_login(world.lead_a)
    page = client.get(f"/validations/{job.pk}/").content.decode()
    assert "Cancel the validation" in page
    answered = client.post(f"/validations/{job.pk}/cancel/", HTTP_HX_REQUEST="true")
    assert answered.status_code == 286, answered.content  # the status part, polling stopped
    text = answered.content.decode()
    assert "Cancelled by" in text and "Cancel the validation" not in text
    job.refresh_from_db()
    assert (job.state, job.cancelled_by) == ("cancelled", world.lead_a)
    # Nothing had left the portal: the worker has nothing to scancel and says so.
    assert "not been submitted" in run_cancel(job).scancel
    assert client.post(f"/validations/{job.pk}/cancel/", HTTP_HX_REQUEST="true").status_code == 409
    assert client.post(f"/validations/{job.pk}/cancel/").status_code == 302  # the page: back to the job, a message


@pytest.mark.django_db
def test_a_cancel_while_sbatch_was_being_followed_finds_the_slurm_job_and_stops_it(world, aws, settings, monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 600)
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    job, _ = validation.start(cluster, actor=world.lead_a)
    for _ in range(2):  # the head node found, sbatch sent; its answer not read yet
        ValidationJob.objects.filter(pk=job.pk).update(lease_until=None)
        validation.step(job.pk)
    job.refresh_from_db()
    assert job.state == "pending" and job.command_id and not job.slurm_job_id
    validation.cancel(job, world.lead_a)
    assert validation.step(job.pk)[0] == validation.DONE  # the worker's submission stops
    job = run_cancel(job)
    assert job.slurm_job_id and job.scancel == f"scancel {job.slurm_job_id}: done."
    assert slurm_job(job)["state"] == "CANCELLED"


@pytest.mark.django_db
def test_a_cancel_after_the_job_finished_is_refused_and_a_post_after_a_cancel_is_refused(world, cluster):
    from clusters.health.api.authentication import ValidationJobTokenAuthentication  # noqa: F401 - the route's

    job = ValidationJob.objects.create(cluster=cluster, key="k1", expected=["all_reduce"], collectives=["all_reduce"],
                                       upload_base="http://portal.invalid", state="submitted")
    validation.receive(job, "all_reduce", sample("nccl_allreduce_2xp5_efa_srun.txt").encode())
    job.refresh_from_db()
    assert job.state == "done"
    with pytest.raises(validation.ValidationRefused):
        validation.cancel(job, world.lead_a)
    job.refresh_from_db()
    assert (job.state, job.cancelled_at) == ("done", None)

    other = ValidationJob.objects.create(cluster=cluster, key="k2", expected=["all_reduce"], collectives=["all_reduce"],
                                         upload_base="http://portal.invalid", state="submitted")
    validation.cancel(other, world.customer_a)
    with pytest.raises(validation.OutputRejected) as refused:
        validation.receive(other, "all_reduce", sample("nccl_allreduce_2xp5_efa_srun.txt").encode())
    assert refused.value.status == 410
    other.refresh_from_db()
    assert other.state == "cancelled" and other.verdict == "" and not other.runs.exists()


@pytest.mark.django_db(transaction=True)
def test_a_cancel_racing_the_jobs_finish_leaves_one_final_state_on_postgresql(world, settings):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL (SQLite has one writer)")
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster")
    text = sample("nccl_allreduce_2xp5_efa_srun.txt").encode()
    for round_ in range(4):
        job = ValidationJob.objects.create(cluster=cluster, key=f"race-{round_}", expected=["all_reduce"],
                                           collectives=["all_reduce"], upload_base="http://portal.invalid",
                                           state="submitted")

        def act(i, job=job):
            fresh = ValidationJob.objects.select_related("cluster__organization").get(pk=job.pk)
            return (validation.cancel(fresh, world.lead_a) if i % 2 else
                    validation.receive(fresh, "all_reduce", text))

        results = concurrency.race(2, act)
        job.refresh_from_db()
        won = [r for r in results if not isinstance(r, Exception)]
        assert len(won) == 1, results  # the other was refused: ValidationRefused (cancel) or OutputRejected (the output)
        assert all(isinstance(r, (validation.ValidationRefused, validation.OutputRejected)) for r in results if r not in won)
        if job.state == "done":
            assert job.cancelled_at is None and job.runs.count() == 1
        else:
            assert job.state == "cancelled" and job.verdict == "" and job.runs.count() == 0


# --- the timeout asks sacct -----------------------------------------------------------------------------

def timed_out(job) -> ValidationJob:
    ValidationJob.objects.filter(pk=job.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert validation.recover()[0] == 1
    job.refresh_from_db()
    assert (job.state, job.failure_reason) == ("timed_out", "no_report")
    return job


@pytest.mark.django_db
def test_the_timeout_says_what_sacct_knows_failed_node_fail_or_still_pending(world, aws, settings, monkeypatch):
    job = submitted(world, monkeypatch, settings)
    moto_sbatch.end_job(emulated(job), job.slurm_job_id, "FAILED", "1:0", "NonZeroExitCode")
    job = timed_out(job)
    assert "sacct: the job is FAILED, exit code 1:0, reason NonZeroExitCode." in job.error, job.error
    assert "ended FAILED (exit code 1:0)" in validation.shown_error(job, world.customer_a)

    second = submitted(world, monkeypatch, settings, name="pc-two")
    moto_sbatch.end_job(emulated(second), second.slurm_job_id, "NODE_FAIL", "0:0")
    second = timed_out(second)
    assert "sacct: the job is NODE_FAIL, exit code 0:0." in second.error, second.error
    assert "a node failed under the job" in validation.shown_error(second, world.customer_a)

    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 0.3)
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, name="pc-three", hosts=HOSTS[:2])
    third, _ = validation.start(cluster, actor=world.lead_a)
    validation.step(third.pk)  # the head node found
    third.refresh_from_db()
    moto_sbatch.hold(emulated(third), "Resources")
    third = step_until_submitted(third)
    time.sleep(0.6)  # past its run time: held in the queue, it did not run
    third = timed_out(third)
    assert "sacct: the job is PENDING, reason Resources." in third.error, third.error
    assert "still had it queued (Resources)" in validation.shown_error(third, world.customer_a)
    assert wait(lambda: slurm_job(third)["state"] == "CANCELLED", 10)  # stopped: it cannot run after the portal gave up


@pytest.mark.django_db
def test_the_timeout_says_when_sacct_cannot_answer(world, aws, settings, monkeypatch):
    job = submitted(world, monkeypatch, settings)
    original = moto_sbatch.sacct

    @moto_headnode.headnode_command(r"^sacct\b")
    def broken(context):
        return moto_headnode.Result(1, "", "sacct: error: Problem talking to the database: Connection refused\n")

    try:
        job = timed_out(job)
    finally:
        moto_headnode.headnode_command(r"^sacct\b")(original)
    assert "sacct gave no answer: sacct: error: Problem talking to the database" in job.error, job.error
    assert validation.shown_error(job, world.customer_a) == (
        "The validation job never reported its results in time (it may still be queued behind other jobs, or have "
        "failed before posting). Your lead SA has the details.")


def test_sacct_rows_are_read_by_the_jobs_own_id():
    out = "1001|FAILED|2:0|NonZeroExitCode\n1001.batch|FAILED|2:0|\n1002|COMPLETED|0:0|None\n"
    assert validation.parse_sacct(out, "1001") == validation.SlurmState("FAILED", "2:0", "NonZeroExitCode")
    assert validation.parse_sacct(out, "1003").sentence.startswith("sacct knows no such job")
    assert validation.SlurmState("RUNNING", "0:0", "None").sentence == "sacct: the job is RUNNING."


@pytest.mark.worker
def test_a_cancel_through_the_api_is_carried_out_by_a_real_worker(world, celery_worker_process, live_server, settings,
                                                                  monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 600)
    settings.PORTAL_BASE_URL = live_server.url
    cluster = pcluster(world.org_a)
    lead = APIClient()
    lead.force_authenticate(world.lead_a)
    job_id = lead.post("/api/health/validations/", {"cluster": cluster.pk}, format="json").json()["id"]
    assert wait(lambda: ValidationJob.objects.get(pk=job_id).state == "submitted"), ValidationJob.objects.get(pk=job_id).error
    assert lead.post(f"/api/health/validations/{job_id}/cancel/").status_code == 200
    assert wait(lambda: ValidationJob.objects.get(pk=job_id).scancel.endswith(": done.")), (
        ValidationJob.objects.get(pk=job_id).scancel)
    job = ValidationJob.objects.get(pk=job_id)
    assert (job.state, job.cancelled_by) == ("cancelled", world.lead_a)
    assert slurm_job(job)["state"] == "CANCELLED"
