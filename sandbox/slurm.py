"""Demo: what a launched ParallelCluster's nodes are called, and where their exporters push, on the embedded endpoint.

The demo's health reports name each node by its hostname, as exporters do; the hostnames are the instances' (the
endpoint's), so the seed asks the cluster, as the portal does before it speaks to Slurm: Slurm's listing through
the head node (``slurm_names.COMMAND``), kept with ``slurm_names.store``. The emulated nodes push their health after
a reboot or a replacement once the endpoint knows the portal's ingestion URL and a token of the cluster (the stand-in
for the exporters the software stack configures), which ``configure_exporters`` tells it. A HyperPod Slurm cluster's
controller runs the portal's agent (``start_agent``), as its lifecycle scripts install it. Nothing without an
endpoint."""
from __future__ import annotations

import logging
import time

from django.conf import settings

from clusters.choices import Orchestrator
from clusters.health.models import ClusterHealthConfig
from clusters.health.validation import headnode, slurm_names
from portal.core.aws import AwsError
from sandbox.aws import control

logger = logging.getLogger(__name__)
POLLS = 20


def learn(cluster) -> list[str]:
    """The cluster's hostnames in Slurm's node order, learned from its head node now ([] when it cannot be)."""
    if not settings.AWS_ENDPOINT_URL or cluster.orchestrator != Orchestrator.PARALLELCLUSTER:
        return []
    try:
        target = headnode.target(cluster)
        command_id = headnode.send(cluster, target, [slurm_names.COMMAND], comment="GENIAC demo: node names")
        for _ in range(POLLS):
            result = headnode.invocation(cluster, target, command_id)
            if result.finished:
                break
            time.sleep(0.1)
        if result.status != "Success":
            return []
        listing = slurm_names.parse(result.stdout)
    except (AwsError, ValueError) as exc:
        logger.warning("demo: no Slurm node names for %s: %s", cluster, exc)
        return []
    slurm_names.store(cluster, listing)
    return [host for host, _name in sorted(listing.items(), key=lambda item: _order(item[1][0]))]


def _order(name: str) -> tuple[str, int]:
    stem, _sep, number = name.rpartition("-")
    return (stem, int(number)) if number.isdigit() else (name, 0)


def configure_exporters(cluster, push_url: str) -> bool:
    """Tell the endpoint where the cluster's emulated exporters push (a fresh ingestion token of the cluster)."""
    if not settings.AWS_ENDPOINT_URL or cluster.orchestrator != Orchestrator.PARALLELCLUSTER:
        return False
    head = (cluster.outputs or {}).get("HeadNodeInstanceId", "")
    if not head:
        return False
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    token = config.rotate_token()
    config.save()
    control.configure_exporters(settings.AWS_ENDPOINT_URL, account_id=cluster.organization.aws_account_id,
                                region=cluster.region, head_node=head, url=push_url, token=token)
    return True


def start_agent(cluster, token: str, base_url: str = "", cluster_arn: str = "") -> bool:
    """Run the HyperPod Slurm cluster's controller agent on the endpoint, polling the portal at ``base_url`` (by
    default PORTAL_BASE_URL, which run_demo sets to its web server) with the cluster's ingestion ``token``. The
    account is the one the cluster's ARN names (``cluster_arn`` or its outputs), else its organization's."""
    base = base_url or settings.PORTAL_BASE_URL or "http://127.0.0.1:8000"
    if not settings.AWS_ENDPOINT_URL or cluster.orchestrator != Orchestrator.HYPERPOD:
        return False
    arn = (cluster_arn or (cluster.outputs or {}).get("ClusterArn") or "").split(":")
    account = arn[4] if len(arn) > 5 and arn[4] else cluster.organization.aws_account_id
    control.start_agent(settings.AWS_ENDPOINT_URL, account_id=account,
                        region=cluster.region, cluster_name=(cluster.outputs or {}).get("ClusterName") or cluster.name,
                        url=base, cluster_id=cluster.pk, token=token)
    return True
