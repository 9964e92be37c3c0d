"""Validation on a ParallelCluster speaks Slurm's node names (``<queue>-st-<resource>-<n>``), not hostnames: the
chosen nodes' names are learned from the head node, ``sbatch --nodelist`` and the pairwise script take them, and the
sweep's pairs come back to people as hostnames."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from clusters.health.models import SlurmNode, ValidationJob
from clusters.health.validation import headnode
from clusters.health.validation import service as validation
from sandbox.aws import moto_headnode, moto_sbatch
from tests.clusters.factories_clusters import finished_invocation
from tests.health.test_validation_jobs import pcluster, quick_jobs, sent_variables, step_until_submitted, wait

__all__ = ["quick_jobs"]
HOSTS = ["ip-10-1-45-12", "ip-10-1-45-13", "ip-10-1-45-14", "ip-10-1-45-15"]  # the emulated instances' hostnames
NAMES = [f"compute-st-p5-nodes-{i}" for i in range(1, 5)]


@pytest.mark.django_db
def test_chosen_nodes_are_sent_to_sbatch_by_their_slurm_names(world, aws, settings):
    settings.PORTAL_BASE_URL = "http://portal.example"
    cluster = pcluster(world.org_a, hosts=HOSTS)
    job, _ = validation.start(cluster, actor=world.lead_a, nodes=HOSTS[1:3], key="names")
    job = step_until_submitted(job)
    assert job.state == "submitted", job.error
    assert dict(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", "node_name")) == dict(
        zip(HOSTS, NAMES, strict=True))
    assert sent_variables(cluster, job)["GENIAC_HOSTS"] == f"{NAMES[1]} {NAMES[2]}"
    assert f"--nodelist={NAMES[1]},{NAMES[2]}" in validation.sbatch_line(job, "#!/bin/bash\n")
    assert job.names_command == ""


@pytest.mark.django_db
def test_the_head_node_refuses_hostnames_as_slurm_does(world, aws):
    cluster = pcluster(world.org_a, name="pc-refuse", hosts=HOSTS)
    target = headnode.target(cluster)
    for command, error in ((f"scontrol update nodename={HOSTS[0]} state=DRAIN reason=x",
                            f"scontrol: error: Invalid node name specified: {HOSTS[0]}"),
                           (headnode.sbatch_command("#!/bin/bash\ntrue").replace(
                               "sbatch --parsable", f"sbatch --parsable --nodelist={HOSTS[0]}"),
                            "sbatch: error: Batch job submission failed: Invalid node name specified")):
        command_id = headnode.send(cluster, target, [command])
        result = finished_invocation(cluster, target, command_id)
        assert (result.status, result.stderr.strip()) == ("Failed", error)


@pytest.mark.worker
def test_a_parallelcluster_pairwise_sweep_finds_the_slow_node_by_hostname_on_a_real_worker(
        world, celery_worker_process, live_server, settings, quick_jobs):
    settings.PORTAL_BASE_URL = live_server.url
    cluster = pcluster(world.org_a, name="pc-sweep", hosts=HOSTS)
    head = headnode.target(cluster)
    moto_sbatch.seed_slow_link(moto_headnode.cluster_of(world.org_a.aws_account_id, cluster.region, head), HOSTS[-1])
    lead = APIClient()
    lead.force_authenticate(world.lead_a)
    started = lead.post("/api/health/validations/", {"cluster": cluster.pk, "pairwise": True}, format="json")
    assert started.status_code == 201, started.content
    job_id = started.json()["id"]
    assert wait(lambda: ValidationJob.objects.get(pk=job_id).state in ("done", "failed")), \
        ValidationJob.objects.get(pk=job_id).error
    job = ValidationJob.objects.get(pk=job_id)
    assert job.state == "done", job.error
    assert job.received == job.expected == [f"{a},{b}" for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]]
    assert (job.verdict, job.slow_nodes) == ("fail", [HOSTS[-1]])
