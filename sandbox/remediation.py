"""Demo remediation: a HyperPod P5 cluster of Shirakawa AI with one faulty node (XID 79 and a missing GPU), which
exists on the embedded endpoint too, so the whole loop runs in the demo.

The organization agrees that every action needs its approval, and its lead SA has proposed replacing the node
through the real service. A customer engineer (``shirakawa``) approves it on the cluster's health page; the worker
replaces the node through ``BatchReplaceClusterNodes``; the new instance boots and its exporter pushes a clean report
(the emulated node posts it to ``PORTAL_BASE_URL`` with the cluster's ingestion token); the next poll closes the
faults, linked to the action.

Idempotent: the cluster, its first report and the proposal (a fixed key) are made once. The endpoint forgets
everything when the demo stops, so each seed makes the cluster there again when it is missing (with a fresh token),
and starts the agent on its controller (the software stack's program, docs/DECISIONS.md 42), through which the
portal runs validations and drains on HyperPod Slurm. One node (``SLOW_LINK``) has a degraded link in the emulated
hardware: a pairwise sweep from the cluster's health page names it from its lower figures, nothing flags it.

The launched ParallelCluster clusters get the same loop through Slurm: the seed tells the endpoint where their
nodes' exporters push (``demo_slurm.configure_exporters``), so a node rebooted or replaced with ``scontrol`` reports
itself healthy again and the action ends done.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.urls import reverse

from clusters.blueprints import catalog
from clusters.choices import ClusterState, Orchestrator
from clusters.health.choices import Source
from clusters.health.ingest import service as health
from clusters.health.models import ClusterHealthConfig, GpuFault, HealthReport
from clusters.models import Cluster
from clusters.remediation import services
from clusters.remediation.models import RemediationPolicy
from clusters.software import release
from portal.core import aws
from portal.core.models import Membership
from sandbox import slurm as demo_slurm
from sandbox.aws import control, tags
from sandbox.health import SAMPLES

logger = logging.getLogger(__name__)

ORGANIZATION = "shirakawa-ai"
NAME = "shirakawa-hp-p5"
NODES = 4
GROUP = "worker-group-1"
# The emulation's hostnames (sandbox.aws.moto_hyperpod_nodes): ip-10-1-0-10 … for the first instance group.
HOSTS = tuple(f"ip-10-1-0-{10 + i}" for i in range(NODES))
FAULTY = HOSTS[-1]
# A node whose EFA link is degraded in the emulated hardware: a pairwise sweep shows it by its lower figures.
SLOW_LINK = HOSTS[1]


def _cluster(org) -> Cluster:
    cluster, _ = Cluster.objects.get_or_create(
        organization=org, name=NAME,
        defaults={"instance_type": "p5.48xlarge", "node_count": NODES, "state": ClusterState.READY,
                  "blueprint": catalog.sync()["hyperpod"],  # a HyperPod cluster of the catalog's blueprint
                  "orchestrator": "hyperpod", "region": org.home_region,
                  "outputs": {"ClusterName": NAME}, "software_version": release.CURRENT_VERSION,
                  "software_hash": release.content_hash()})
    return cluster


def report(hosts_faulty: dict[str, bool]) -> str:
    """One exposition of the named nodes: the healthy P5 sample, or the XID 79 / missing-GPU one."""
    healthy = (SAMPLES / "dcgm_p5_healthy.prom").read_text()
    faulty = (SAMPLES / "dcgm_p5_xid79_missing_gpu.prom").read_text()
    parts = []
    for index, (host, bad) in enumerate(hosts_faulty.items()):
        text = faulty.replace("ip-10-1-45-13", host) if bad else healthy.replace("ip-10-1-45-12", host)
        if index:  # one HELP/TYPE header per metric
            text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
        parts.append(text)
    return "".join(parts)


def push_url(cluster) -> str:
    base = settings.PORTAL_BASE_URL or "http://127.0.0.1:8000"  # run_demo sets it to its own web server
    return f"{base.rstrip('/')}{reverse('health-api:ingest', kwargs={'cluster_id': cluster.pk})}"


def ensure_on_endpoint(cluster) -> bool:
    """Make the cluster on the embedded endpoint when it is not there (True when made), its nodes tagged to push
    their health to the portal with a new ingestion token. Nothing without an endpoint."""
    if not settings.AWS_ENDPOINT_URL:
        return False
    client = aws.client("sagemaker", organization=cluster.organization, region=cluster.region)
    listed = client.list_clusters(NameContains=NAME).get("ClusterSummaries", [])
    if any(c["ClusterName"] == NAME for c in listed):
        return False
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    token = config.rotate_token()
    config.save()
    made = client.create_cluster(
        ClusterName=NAME,
        InstanceGroups=[{"InstanceGroupName": GROUP, "InstanceType": "ml.p5.48xlarge", "InstanceCount": NODES,
                         "LifeCycleConfig": {"SourceS3Uri": f"s3://sagemaker-{NAME}/lifecycle/",
                                             "OnCreate": "on_create.sh"},
                         "ExecutionRole": f"arn:aws:iam::{cluster.organization.aws_account_id}:role/{NAME}",
                         "ThreadsPerCore": 1}],
        Tags=[{"Key": tags.HEALTH_PUSH_URL, "Value": push_url(cluster)},
              {"Key": tags.HEALTH_PUSH_TOKEN, "Value": token}])
    Cluster.objects.filter(pk=cluster.pk).update(outputs={**cluster.outputs, "ClusterArn": made["ClusterArn"]})
    demo_slurm.start_agent(cluster, token, cluster_arn=made["ClusterArn"])  # validation and drains go through it
    control.seed_slow_link(settings.AWS_ENDPOINT_URL, account_id=made["ClusterArn"].split(":")[4], region=cluster.region,
                           target=f"sagemaker-cluster:{NAME}_controller", hostname=SLOW_LINK)
    return True


def seed(context: dict) -> dict:
    for launched in Cluster.objects.filter(state=ClusterState.READY, orchestrator=Orchestrator.PARALLELCLUSTER):
        demo_slurm.configure_exporters(launched, push_url(launched))  # rebooted nodes report to the portal
    org = context.get("organizations", {}).get(ORGANIZATION)
    if org is None:
        return context
    cluster = _cluster(org)
    ensure_on_endpoint(cluster)
    if not HealthReport.objects.filter(cluster=cluster).exists():
        health.ingest(cluster, report({host: host == FAULTY for host in HOSTS}), Source.PUSH)
    RemediationPolicy.objects.get_or_create(organization=org)  # approval: nothing widened, nobody had to agree
    fault = (GpuFault.objects.filter(cluster=cluster, hostname=FAULTY, kind="xid", xid=79).order_by("pk").first())
    if fault is None:
        return context
    lead = Membership.objects.filter(organization=org, role="lead_sa").select_related("user").first()
    # The XID table's advice for 79 is "reboot the node; replace it if it recurs": it has recurred on this node
    # (the story the demo tells), so the lead SA proposes the second step.
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY],
                                 actor=lead.user if lead else None, key=f"demo-fault-{fault.pk}",
                                 reason=f"XID 79 on {FAULTY} again: the GPU fell off the bus a second time.")
    context["remediation_action"] = action
    return context
