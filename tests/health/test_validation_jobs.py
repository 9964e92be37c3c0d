"""NCCL validation started from the portal: submitted with sbatch through SSM on the embedded endpoint's emulated
head node (ParallelCluster) and through the agent on the controller node (HyperPod Slurm), the emulated job posting real-format output back
to the portal with its own token, the verdict, the pairwise sweep's slow node, the timeout, throttling and
provider failures, double submits, and the upload route's refusals."""
from __future__ import annotations

import random
import re
import time
from datetime import timedelta

import pytest
import requests
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.health.ingest import service as services
from clusters.health.ingest.service import ingest
from clusters.health.models import AgentWorkItem, ClusterHealthConfig, ValidationJob, ValidationRun
from clusters.health.validation import agent
from clusters.health.validation import service as validation
from clusters.models import Cluster
from portal.core.aws import client as aws_client
from portal.core.models import TimelineEntry
from sandbox.aws import moto_agent, moto_collectives, moto_headnode, moto_sbatch
from tests import concurrency
from tests.clusters.factories_clusters import launched_cluster, run_pipeline
from tests.health.factories_health import ClusterFactory, sample

HOSTS = ["ip-10-1-0-4", "ip-10-1-0-5", "ip-10-1-0-6", "ip-10-1-0-7"]
# HyperPod's workers as ListClusterNodes names them (the second instance group, after the controller's).
HP_HOSTS = ["ip-10-1-1-10", "ip-10-1-1-11", "ip-10-1-1-12", "ip-10-1-1-13"]


def reported(cluster, hosts=HOSTS):
    """Health reports naming ``hosts``: the node set the portal offers and checks."""
    for host in hosts:
        ingest(cluster, sample("dcgm_p5_healthy.prom").replace("ip-10-1-45-12", host), "push")
    return cluster


def pcluster(org, name="pc-val", hosts=HOSTS):
    cluster = launched_cluster(org, name=name, count=len(hosts))
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == "ready", cluster.error_message
    return reported(cluster, hosts)


def hyperpod(org, name="hp-val", hosts=HP_HOSTS, instance_type="p5.48xlarge"):
    """A ready HyperPod Slurm cluster of ``org`` in the embedded endpoint, with its controller node."""
    cluster = launched_cluster(org, name=name, blueprint="hyperpod", full_stack=False, count=len(hosts))
    Cluster.objects.filter(pk=cluster.pk).update(state="ready", instance_type=instance_type)
    sm = aws_client("sagemaker", organization=org, region=cluster.region)
    common = {"LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/", "OnCreate": "on_create.sh"},
              "ExecutionRole": "arn:aws:iam::123456789012:role/hp"}
    sm.create_cluster(ClusterName=name, InstanceGroups=[
        {"InstanceGroupName": "controller-machine", "InstanceType": "ml.m5.12xlarge", "InstanceCount": 1,
         "ThreadsPerCore": 2, **common},
        {"InstanceGroupName": "worker-group-1", "InstanceType": f"ml.{instance_type}", "InstanceCount": len(hosts),
         "ThreadsPerCore": 1, **common}])
    cluster.refresh_from_db()
    return reported(cluster, hosts)


@pytest.fixture(autouse=True)
def _agents_stop():
    yield
    moto_agent.stop_all()


def start_agent(cluster, url: str):
    """Run the cluster's controller agent on the endpoint (the software stack's program) against the portal at
    ``url`` with a fresh ingestion token, and wait for its first poll."""
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    token = config.rotate_token()
    config.save()
    moto_agent.start(cluster.organization.aws_account_id, cluster.region, cluster.name, url=url, cluster_id=cluster.pk,
                     token=token, wait=1)
    assert wait(lambda: agent.absent(cluster) == "", timeout=30), agent.absent(cluster)
    return token


def wait(predicate, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def step_until_submitted(job, limit: int = 10) -> ValidationJob:
    for _ in range(limit):
        job.refresh_from_db()
        if job.state != "pending":
            break
        ValidationJob.objects.filter(pk=job.pk).update(lease_until=None)
        validation.step(job.pk)
    job.refresh_from_db()
    return job


def sent_variables(cluster, job) -> dict:
    """The GENIAC_* lines of the script the portal sent to the head node, as SSM keeps the command."""
    ssm = aws_client("ssm", organization=cluster.organization, region=cluster.region)
    command = ssm.list_commands(CommandId=job.command_id)["Commands"][0]["Parameters"]["commands"][0]
    return {name: value.strip("'") for name, value in re.findall(r"^(GENIAC_[A-Z_]+)=(.*)$", command, re.MULTILINE)}


def post(url, token, body, **query):
    return requests.post(url, params=query, data=body.encode() if isinstance(body, str) else body, timeout=30,
                         headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})


@pytest.fixture
def quick_jobs(monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 0.3)


# --- round trips on a real worker ----------------------------------------------------------------------

@pytest.mark.worker
def test_parallelcluster_validation_started_through_the_api_reaches_a_verdict_on_a_real_worker(
        world, celery_worker_process, live_server, settings, quick_jobs):
    settings.PORTAL_BASE_URL = live_server.url
    cluster = pcluster(world.org_a)
    lead = APIClient()
    lead.force_authenticate(world.lead_a)
    body = {"cluster": cluster.pk, "collectives": ["all_reduce", "all_gather"]}
    first = lead.post("/api/health/validations/", body, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    again = lead.post("/api/health/validations/", body, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    assert first.status_code == 201, first.content
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    job_id = first.json()["id"]
    assert wait(lambda: ValidationJob.objects.get(pk=job_id).state == "done"), ValidationJob.objects.get(pk=job_id).error
    job = ValidationJob.objects.get(pk=job_id)
    assert job.verdict == "pass" and job.received == ["all_reduce", "all_gather"]
    assert job.slurm_job_id or job.command_id  # the worker saw sbatch's answer, or the job posted first
    runs = ValidationRun.objects.filter(job=job).order_by("pk")
    assert [r.collective for r in runs] == ["all_reduce", "all_gather"]
    assert runs[0].nodes == 4 and runs[0].plateau_busbw > 400 and runs[0].nccl_version.startswith("2.29.3")
    assert "all_reduce: pass" in job.summary
    assert TimelineEntry.objects.filter(organization=world.org_a, title__contains="validation (all_reduce, all_gather) "
                                                                                  "passed").exists()
    detail = lead.get(f"/api/health/validations/{job_id}/").json()
    assert detail["state"] == "done" and detail["runs"] == [r.pk for r in runs]
    assert ValidationJob.objects.count() == 1


@pytest.mark.worker
def test_hyperpod_slurm_pairwise_sweep_names_the_slow_node_on_a_real_worker(
        world, celery_worker_process, live_server, settings, quick_jobs):
    settings.PORTAL_BASE_URL = live_server.url
    cluster = hyperpod(world.org_a)
    start_agent(cluster, live_server.url)
    slow = HP_HOSTS[1]  # a degraded link in the emulated hardware: the sweep finds it from the figures
    moto_sbatch.seed_slow_link(moto_headnode.cluster_of(world.org_a.aws_account_id, cluster.region,
                                                        f"sagemaker-cluster:{cluster.name}_controller"), slow)
    customer = APIClient()
    customer.force_authenticate(world.customer_a)
    started = customer.post("/api/health/validations/", {"cluster": cluster.pk, "pairwise": True}, format="json")
    assert started.status_code == 201, started.content
    job_id = started.json()["id"]
    assert started.json()["expected"] == [f"{a},{b}" for i, a in enumerate(HP_HOSTS) for b in HP_HOSTS[i + 1:]]
    assert wait(lambda: ValidationJob.objects.get(pk=job_id).state == "done"), ValidationJob.objects.get(pk=job_id).error
    job = ValidationJob.objects.get(pk=job_id)
    assert job.target == "geniac-agent" and job.command_id.startswith("agent-")  # the agent, not SSM
    item = AgentWorkItem.objects.get(pk=int(job.command_id.removeprefix("agent-")))
    assert (item.kind, item.payload["action"], item.state, item.exit_status) == ("validation", "sbatch", "done", 0)
    assert item.stdout.strip().isdigit() and job.slurm_job_id in ("", item.stdout.strip())  # the job may post first
    assert (job.verdict, job.slow_nodes) == ("fail", [slow])
    assert not ValidationRun.objects.filter(job=job).exists()  # pairs are the job's, not runs of the cluster
    detail = customer.get(f"/api/health/validations/{job_id}/").json()
    assert sorted(tuple(o["hosts"]) for o in detail["outliers"]) == sorted(
        tuple(p.split(",")) for p in job.expected if slow in p.split(","))
    assert all(o["deviation"] < -0.15 for o in detail["outliers"])
    customer.force_login(world.customer_a)
    page = customer.get(f"/validations/{job_id}/")
    assert page.status_code == 200
    assert f"Slow node:</strong> {slow}" in page.content.decode()


@pytest.mark.worker
def test_a_trainium_hyperpod_cluster_runs_nccom_test_on_a_real_worker(world, celery_worker_process, live_server,
                                                                      settings, quick_jobs):
    settings.PORTAL_BASE_URL = live_server.url
    cluster = hyperpod(world.org_a, name="hp-trn", hosts=HP_HOSTS[:2], instance_type="trn1.32xlarge")
    start_agent(cluster, live_server.url)
    job, created = validation.start(cluster, actor=world.lead_a)
    assert created
    assert wait(lambda: ValidationJob.objects.get(pk=job.pk).state == "done"), ValidationJob.objects.get(pk=job.pk).error
    run = ValidationRun.objects.get(job=job)
    assert run.result["tool"] == "nccom-test" and run.verdict == "pass" and run.nodes == 2


@pytest.mark.django_db
def test_hyperpod_validation_is_refused_in_plain_words_while_the_controller_agent_is_not_heard_from(world, aws, client,
                                                                                                  settings):
    """HyperPod Slurm is reached through the agent on its controller: until it has polled the portal (or once it has
    gone quiet for AGENT_SEEN_MINUTES) the portal says so before it starts anything, on the page and through the
    API, and a job started while it was there fails with the same words instead of waiting for nobody."""
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = hyperpod(world.org_a, name="hp-refused", hosts=HP_HOSTS[:2])
    with pytest.raises(validation.ValidationRefused, match="agent on this cluster's controller has never contacted the portal"):
        validation.start(cluster, actor=world.lead_a)
    api = APIClient()
    api.force_authenticate(world.lead_a)
    refused = api.post("/api/health/validations/", {"cluster": cluster.pk}, format="json")
    assert refused.status_code == 400 and "has never contacted the portal" in refused.json()["detail"]
    client.force_login(world.lead_a)
    panel = client.get(f"/clusters/{cluster.pk}/validations/").content.decode()
    assert "has never contacted the portal" in panel and 'name="pairwise"' not in panel
    assert ValidationJob.objects.count() == 0
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    ClusterHealthConfig.objects.filter(pk=config.pk).update(agent_seen_at=timezone.now())
    job, created = validation.start(cluster, actor=world.lead_a)  # heard from: it starts
    assert created and job.state == "pending"
    quiet = timezone.now() - timedelta(minutes=settings.AGENT_SEEN_MINUTES + 5)
    ClusterHealthConfig.objects.filter(pk=config.pk).update(agent_seen_at=quiet)
    validation.step(job.pk)
    job.refresh_from_db()
    assert (job.state, job.failure_reason) == ("failed", "no_head_node")
    assert "has not contacted the portal for" in job.error and not job.command_id
    assert not AgentWorkItem.objects.filter(cluster=cluster).exists()  # nothing queued for an absent agent


# --- the service, step by step --------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_the_upload_route_takes_each_output_once_with_the_jobs_own_token(world, aws, live_server, settings,
                                                                         monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 600)  # the emulated job stays queued: this test posts
    settings.PORTAL_BASE_URL = live_server.url
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    job, created = validation.start(cluster, actor=world.lead_a, collectives=["all_reduce"])
    assert created
    job = step_until_submitted(job)
    assert job.state == "submitted" and job.slurm_job_id, job.error
    variables = sent_variables(cluster, job)
    token, url = variables["GENIAC_UPLOAD_TOKEN"], variables["GENIAC_UPLOAD_URL"]
    assert url == f"{live_server.url}/api/health/validations/{job.pk}/output/"
    assert token.startswith(f"gv{job.pk}.") and token not in str(ValidationJob.objects.filter(pk=job.pk).values())
    good = moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge")

    assert post(url, "gv999.nope", good, collective="all_reduce").status_code == 401
    other, _ = ValidationJob.objects.get_or_create(cluster=ClusterFactory(organization=world.org_b), key="other",
                                                   defaults={"upload_base": "http://x"})
    assert post(url.replace(f"/{job.pk}/", f"/{other.pk}/"), token, good, collective="all_reduce").status_code == 401
    assert post(url, token, good, collective="all_gather").status_code == 400  # not an operation of this job
    assert post(url, token, good).status_code == 400  # names no output
    settings.HEALTH_VALIDATION_MAX_BYTES = 1000
    assert post(url, token, good, collective="all_reduce").status_code == 413
    settings.HEALTH_VALIDATION_MAX_BYTES = 8 * 1024 * 1024
    malformed = post(url, token, "srun: error: Unable to create step for job 1002: Invalid generic resource\n",
                     collective="all_reduce")
    assert malformed.status_code == 400 and "could not be read" in malformed.json()["detail"]
    assert not ValidationRun.objects.exists() and ValidationJob.objects.get(pk=job.pk).received == []

    taken = post(url, token, good, collective="all_reduce")
    assert taken.status_code == 201, taken.content
    assert taken.json()["state"] == "done" and taken.json()["verdict"] == "pass"
    assert post(url, token, good, collective="all_reduce").status_code == 401  # the finished job's token is dead
    assert ValidationRun.objects.filter(job=job).count() == 1


@pytest.mark.django_db
def test_a_repeated_output_is_refused_with_409_and_writes_nothing(world, cluster):
    reported(cluster)
    job = ValidationJob.objects.create(cluster=cluster, key="k", expected=["all_reduce", "alltoall"],
                                       collectives=["all_reduce", "alltoall"], upload_base="http://portal",
                                       state="submitted")
    text = moto_collectives.nccl_tests("all_reduce", HOSTS, "p5.48xlarge").encode()
    validation.receive(job, validation.part_of(job, "all_reduce"), text)
    job.refresh_from_db()
    with pytest.raises(validation.OutputRejected) as refused:
        validation.part_of(job, "all_reduce")
    assert refused.value.status == 409
    with pytest.raises(validation.OutputRejected):
        validation.receive(job, "all_reduce", text)  # a repeat that raced past the first check
    assert ValidationRun.objects.filter(job=job).count() == 1 and job.state == "submitted"


@pytest.mark.django_db
def test_trainium_nccom_test_output_is_read_and_judged(world):
    cluster = reported(ClusterFactory(organization=world.org_a, name="trn", instance_type="trn1.32xlarge"),
                       HOSTS[:2])
    job = ValidationJob.objects.create(cluster=cluster, key="k", expected=["all_reduce"], collectives=["all_reduce"],
                                       upload_base="http://portal", state="submitted", nodes=HOSTS[:2])
    text = moto_collectives.nccom_test("all_reduce", ["10.1.0.4", "10.1.0.5"]).encode()
    received = validation.receive(job, "all_reduce", text)
    job.refresh_from_db()
    assert received.run.result["tool"] == "nccom-test" and received.run.verdict == "pass"
    assert (job.state, job.verdict) == ("done", "pass")
    slow = ValidationJob.objects.create(cluster=cluster, key="k2", expected=["all_reduce"], collectives=["all_reduce"],
                                        upload_base="http://portal", state="submitted", nodes=HOSTS[:2])
    validation.receive(slow, "all_reduce", moto_collectives.nccom_test("all_reduce", ["10.1.0.4", "10.1.0.5"],
                                                                        factor=0.5).encode())
    slow.refresh_from_db()
    assert slow.verdict in ("warn", "fail") and f"all_reduce: {slow.get_verdict_display().lower()}" in slow.summary


@pytest.mark.django_db
def test_pairwise_outliers_by_deviation_from_the_median_pair(world, cluster):
    reported(cluster)
    job = ValidationJob.objects.create(cluster=cluster, key="k", mode="pairwise", nodes=HOSTS,
                                       expected=validation._expected("pairwise", [], HOSTS),
                                       upload_base="http://portal", state="submitted")
    slow = HOSTS[1]
    for pair in job.expected:
        hosts = pair.split(",")
        text = moto_collectives.nccl_tests("all_reduce", hosts, "p5.48xlarge", factor=0.6 if slow in hosts else 1.0)
        validation.receive(job, pair, text.encode())
    job.refresh_from_db()
    assert (job.state, job.verdict, job.slow_nodes) == ("done", "fail", [slow])
    assert f"Slow node: {slow}" in job.summary
    sweep = validation.sweep_of(job)
    assert sorted(p.hosts for p in sweep.outliers) == sorted(tuple(p.split(",")) for p in job.expected if slow in p)


@pytest.mark.django_db
def test_a_job_that_never_reports_times_out_with_the_reason(world, aws, settings, monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 600)
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    job, _ = validation.start(cluster, actor=world.customer_a)
    job = step_until_submitted(job)
    assert job.state == "submitted", job.error
    assert validation.recover() == (0, 0)
    ValidationJob.objects.filter(pk=job.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert validation.recover()[0] == 1
    job.refresh_from_db()
    assert (job.state, job.failure_reason) == ("timed_out", "no_report")
    assert f"Slurm job {job.slurm_job_id} was submitted" in job.error and "0 of 1 outputs received" in job.error
    assert job.token_hash == ""  # its token died with it
    assert validation.shown_error(job, world.customer_a).startswith("The validation job never reported")
    assert validation.shown_error(job, world.lead_a) == job.error
    assert TimelineEntry.objects.filter(organization=world.org_a, title__endswith="NCCL validation timed out").exists()


@pytest.mark.django_db
def test_throttling_is_retried_with_backoff_then_fails_in_the_portals_words(world, aws, settings, monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 600)
    settings.AWS_MAX_ATTEMPTS = 0  # botocore's own retries off: the portal's backoff is under test
    settings.JOB_MAX_AWS_ERRORS = 3
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    job, _ = validation.start(cluster, actor=world.lead_a)
    validation.step(job.pk)  # finds the head node
    moto_headnode.throttle(1)
    outcome, seconds = validation.step(job.pk)
    assert outcome == validation.POLL and seconds == 2 * settings.VALIDATION_POLL_SECONDS
    job.refresh_from_db()
    assert job.command_id == "" and job.state == "pending"  # SSM took nothing: sent again next time
    assert step_until_submitted(job).state == "submitted"

    other, _ = validation.start(reported(pcluster(world.org_a, name="pc-two", hosts=HOSTS[:2]), HOSTS[:2]),
                                actor=world.lead_a)
    validation.step(other.pk)
    moto_headnode.throttle(10)
    try:
        for _ in range(5):
            validation.step(other.pk)
    finally:
        moto_headnode.throttle(0)
    other.refresh_from_db()
    assert (other.state, other.failure_reason) == ("failed", "throttling")
    assert "ThrottlingException" in other.error
    assert validation.shown_error(other, world.customer_a).startswith("AWS kept slowing down")


@pytest.mark.django_db
def test_provider_failures_fail_the_job_with_the_reason(world, aws, settings):
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    cluster.stacks.filter(role="cluster").update(stack_name="gone", stack_id="")
    job, _ = validation.start(cluster, actor=world.lead_a)
    validation.step(job.pk)
    job.refresh_from_db()
    assert (job.state, job.failure_reason) == ("failed", "no_head_node")
    assert "gone" in job.error or "does not exist" in job.error

    # Slurm refuses the job (the head node answers sbatch with an error): the command's stderr is kept.
    cluster2 = pcluster(world.org_a, name="pc-slurm", hosts=HOSTS[:2])
    job2, _ = validation.start(cluster2, actor=world.lead_a)
    original = moto_sbatch.sbatch

    @moto_headnode.headnode_command(r"^sbatch\b")
    def refusing(context):
        return moto_headnode.Result(1, "", "sbatch: error: Batch job submission failed: Requested node "
                                           "configuration is not available\n")

    try:
        job2 = step_until_submitted(job2)
    finally:
        moto_headnode.headnode_command(r"^sbatch\b")(original)
    assert (job2.state, job2.failure_reason) == ("failed", "command_failed")
    assert "Requested node configuration is not available" in job2.error


@pytest.mark.django_db
def test_a_double_submit_lands_on_the_first_job_and_bad_requests_are_refused(world, settings):
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster"))
    first, created = validation.start(cluster, actor=world.lead_a)
    second, created_again = validation.start(cluster, actor=world.customer_a, collectives=["alltoall"])
    assert created and not created_again and second.pk == first.pk
    assert ValidationJob.objects.count() == 1
    with pytest.raises(validation.ValidationRefused, match="at least two nodes"):
        validation.start(cluster, actor=world.lead_a, nodes=[HOSTS[0]], key="x")
    with pytest.raises(validation.ValidationRefused, match="Not nodes of this cluster"):
        validation.start(cluster, actor=world.lead_a, nodes=["ip-elsewhere", HOSTS[0]], key="y")
    settings.VALIDATION_PAIRWISE_MAX_NODES = 3
    with pytest.raises(validation.ValidationRefused, match="at most 3 nodes"):
        validation.start(cluster, actor=world.lead_a, pairwise_sweep=True, key="z")
    eks = ClusterFactory(organization=world.org_a, name="eks", orchestrator="hyperpod-eks")
    with pytest.raises(validation.ValidationRefused, match="Slurm clusters"):
        validation.start(eks, actor=world.lead_a)
    client = APIClient()
    client.force_authenticate(world.lead_a)
    refused = client.post("/api/health/validations/", {"cluster": eks.pk}, format="json")
    assert refused.status_code == 400 and "Slurm clusters" in refused.json()["detail"]
    outsider = APIClient()
    outsider.force_authenticate(world.lead_b)
    assert outsider.post("/api/health/validations/", {"cluster": cluster.pk}, format="json").status_code == 400
    assert outsider.get(f"/api/health/validations/{first.pk}/").status_code == 404
    assert ValidationJob.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_starts_make_one_job_on_postgresql(world, settings):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the advisory lock that serializes starts is PostgreSQL's (SQLite has one writer anyway)")
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster"))
    results = concurrency.race(6, lambda i: validation.start(cluster, actor=world.lead_a, key=f"k{i}"))
    assert all(isinstance(r, tuple) for r in results), results
    assert len({job.pk for job, _ in results}) == 1 and sum(created for _, created in results) == 1
    assert ValidationJob.objects.count() == 1


@pytest.mark.django_db
def test_the_page_starts_a_validation_with_htmx_and_shows_the_job(world, client, settings):
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster"))
    client.force_login(world.customer_a)
    panel = client.get(f"/clusters/{cluster.pk}/validations/", HTTP_HX_REQUEST="true")
    assert panel.status_code == 200 and "Start the validation" in panel.content.decode()
    answered = client.post(f"/clusters/{cluster.pk}/validations/start/",
                           {"collectives": ["all_reduce", "reduce_scatter"], "nodes": HOSTS[:2],
                            "submission_key": "a" * 32}, HTTP_HX_REQUEST="true")
    assert answered.status_code == 200, answered.content
    job = ValidationJob.objects.get()
    assert (job.collectives, job.nodes, job.requested_by) == (["all_reduce", "reduce_scatter"], HOSTS[:2],
                                                              world.customer_a)
    assert "one validation runs at a time" in answered.content.decode()
    status = client.get(f"/validations/{job.pk}/", HTTP_HX_REQUEST="true")
    assert status.status_code == 200 and 'hx-trigger="every 5s"' in status.content.decode()
    ValidationJob.objects.filter(pk=job.pk).update(state="failed", failure_reason="command_failed", error="slurm: x")
    done = client.get(f"/validations/{job.pk}/", HTTP_HX_REQUEST="true")
    assert done.status_code == 286  # htmx stops polling
    assert "Slurm did not accept" in done.content.decode() and "slurm: x" not in done.content.decode()
    bad = client.post(f"/clusters/{cluster.pk}/validations/start/", {"nodes": ["ip-nowhere"]},
                      HTTP_HX_REQUEST="true")
    # Refused, shown in the panel: htmx swaps a 200 (it drops a 400's body), and nothing more is started.
    assert bad.status_code == 200 and "ip-nowhere" in bad.content.decode()
    assert ValidationJob.objects.count() == 1


@pytest.mark.django_db
def test_the_trend_shows_a_regression_after_a_software_change(world, cluster):
    client = APIClient()
    client.force_authenticate(world.customer_a)
    versions = [("2.26.2", "1.14.0", 1.0), ("2.26.2", "1.14.0", 0.98), ("2.27.7", "1.16.3", 0.8),
                ("2.27.7", "1.16.3", 0.82)]
    for seed, (nccl_version, ofi_version, factor) in enumerate(versions):
        text = moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge", factor=factor,
                                           nccl_version=nccl_version, ofi_version=ofi_version,
                                           rng=random.Random(seed))  # emulated runs vary as real ones do
        services.store_validation(cluster, text, services.parse_validation(cluster, text))
    plateaus = list(ValidationRun.objects.filter(cluster=cluster).order_by("pk").values_list("plateau_busbw",
                                                                                             flat=True))
    answer = client.get(f"/api/health/clusters/{cluster.pk}/validation-trend/")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert [(v["nccl_version"], v["ofi_version"], v["runs"]) for v in data["versions"]] == [
        ("2.26.2", "1.14.0", 2), ("2.27.7", "1.16.3", 2)]
    assert data["versions"][1]["regression"] and data["regression"] and len(data["points"]) == 4
    change = (plateaus[2] + plateaus[3]) / (plateaus[0] + plateaus[1]) - 1  # about -0.18: the runs' own figures
    assert data["versions"][1]["change"] == pytest.approx(change, abs=0.002) and -0.25 < change < -0.12
    page = APIClient()
    page.force_login(world.customer_a)
    html = page.get(f"/clusters/{cluster.pk}/health/").content.decode()
    assert "Regression: the latest NCCL" in html and "2.27.7" in html
    outsider = APIClient()
    outsider.force_authenticate(world.customer_b)
    assert outsider.get(f"/api/health/clusters/{cluster.pk}/validation-trend/").status_code == 404
    assert client.get(f"/api/health/clusters/{cluster.pk}/validation-trend/", {"collective": "x"}).status_code == 400


@pytest.mark.django_db
def test_the_demo_starts_one_validation_on_a_launched_slurm_cluster(world, aws, settings):
    from sandbox import validation as demo_validation

    settings.PORTAL_BASE_URL = ""
    assert "validation_job" not in demo_validation.seed({})  # no address to post back to: nothing started
    settings.PORTAL_BASE_URL = "http://127.0.0.1:8000"
    cluster = pcluster(world.org_a, hosts=HOSTS[:2])
    job = demo_validation.seed({})["validation_job"]
    assert (job.cluster, job.collectives, job.requested_by) == (cluster, ["all_reduce", "all_gather"], world.lead_a)
    assert job.upload_base == "http://127.0.0.1:8000"
    demo_validation.seed({})
    assert ValidationJob.objects.count() == 1


@pytest.mark.django_db
def test_the_sweep_sends_what_the_broker_lost_and_a_send_cut_short_fails_visibly(world, settings):
    settings.PORTAL_BASE_URL = "http://portal.invalid"
    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha", orchestrator="parallelcluster"))
    job = ValidationJob.objects.create(cluster=cluster, key="lost", expected=["all_reduce"], upload_base="http://p",
                                       collectives=["all_reduce"], dispatched_at=None)
    if not settings.REDIS_URL:
        pytest.skip("the sweep sends to the broker (Redis)")
    assert validation.recover() == (0, 1)
    job.refresh_from_db()
    assert (job.dispatched, job.attempts) == (True, 1)
    assert validation.recover() == (0, 0)  # sent, heartbeat fresh: left alone
    # The worker died between writing "submitting" and SSM's answer: whether Slurm got the job is unknown.
    ValidationJob.objects.filter(pk=job.pk).update(target="i-0head", command_id=validation.SUBMITTING)
    assert validation.step(job.pk, 1)[0] == validation.DONE
    job.refresh_from_db()
    assert (job.state, job.failure_reason) == ("failed", "command_failed")
    assert validation.step(job.pk, 1) == (validation.DONE, 0)  # a finished job claims nothing


@pytest.mark.django_db
def test_the_jobs_api_and_panel_run_a_constant_number_of_queries(world, client):
    from tests.queries import assert_flat_queries

    cluster = reported(ClusterFactory(organization=world.org_a, name="alpha"), HOSTS[:2])
    made = iter(range(1000))

    def grow(n):
        for _ in range(n):
            job = ValidationJob.objects.create(cluster=cluster, key=f"k{next(made)}", expected=["all_reduce"],
                                               collectives=["all_reduce"], upload_base="http://p", state="done",
                                               verdict="pass", requested_by=world.lead_a)
            text = moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge")
            services.store_validation(cluster, text, services.parse_validation(cluster, text), job=job)

    client.force_login(world.customer_a)
    assert_flat_queries(client, "/api/health/validations/", grow=grow, sizes=(2, 8))
    assert_flat_queries(client, f"/clusters/{cluster.pk}/validations/", grow=grow, sizes=(2, 8))
    assert_flat_queries(client, f"/api/health/clusters/{cluster.pk}/validation-trend/", grow=grow, sizes=(2, 8))
