"""The pipeline step before a cluster stack: upload the software stack, wire observability.

ParallelCluster's custom actions and HyperPod's ``OnCreate`` name objects in the organization's
bucket (the storage stack's ``BucketName``); a stack created before they exist fails on its nodes
(HyperPod refuses at once). So the bundle (:func:`clusters.software.release.bundle`) is uploaded first,
then the version and content hash are recorded on the cluster. The same step fills the cluster's
Prometheus pull settings from the organization's observability stack, whose workspace the nodes
remote-write to. Uploading is idempotent: a retried step puts the same objects again.
"""
from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from clusters.choices import ClusterState, StackRole
from clusters.health.choices import AuthKind
from clusters.health.models import ClusterHealthConfig
from clusters.health.validation import agent
from clusters.models import Cluster, LaunchJob, Stack
from clusters.software import release
from portal.core import aws


class MissingInput(Exception):
    """The cluster stack lacks what the bundle needs (a bucket, the Lustre names)."""


def observability_of(cluster: Cluster) -> Cluster | None:
    """The organization's newest ready observability cluster with a Prometheus workspace, if any."""
    candidates = (Cluster.objects.filter(organization_id=cluster.organization_id, blueprint__kind="observability",
                                         state=ClusterState.READY)
                  .exclude(pk=cluster.pk).order_by("-updated"))
    return next((c for c in candidates if (c.outputs or {}).get("PrometheusEndpoint")), None)


def remote_write_url(endpoint: str) -> str:
    """AMP's remote-write URL from the workspace endpoint (``…/workspaces/<id>/``)."""
    return endpoint.rstrip("/") + "/api/v1/remote_write"


def needs_upload(stack: Stack) -> bool:
    return stack.role == StackRole.CLUSTER and stack.blueprint.kind in ("parallelcluster", *release.HYPERPOD_KINDS)


def upload_software(job: LaunchJob, cluster: Cluster, stack: Stack, inputs: dict[str, str]) -> None:
    """Upload the cluster's bundle to its bucket and record what was uploaded on the cluster."""
    bucket = inputs.get("BucketName")
    if not bucket:
        raise MissingInput("The cluster stack has no BucketName: the software stack has nowhere to go.")
    observability = observability_of(cluster)
    endpoint = (observability.outputs or {}).get("PrometheusEndpoint", "") if observability else ""
    try:
        objects = release.bundle(stack.blueprint.kind, inputs, region=cluster.region,
                                  remote_write_url=remote_write_url(endpoint) if endpoint else "",
                                  version=release.CURRENT_VERSION, cluster_id=cluster.pk)
    except ValueError as exc:
        raise MissingInput(str(exc)) from exc
    try:
        s3 = aws.client("s3", organization=cluster.organization, region=cluster.region)
        release.upload(s3, bucket, objects)
    except (ClientError, BotoCoreError) as exc:
        raise aws.translate(exc) from exc
    cluster.software_version = release.CURRENT_VERSION
    cluster.software_hash = release.content_hash(release.CURRENT_VERSION)
    cluster.save(update_fields=["software_version", "software_hash", "updated"])
    where = f"s3://{bucket}/{release.prefix(inputs['ClusterName'])}{release.scripts_prefix(stack.blueprint.kind)}"
    job.add_log(f"uploaded software stack {cluster.software_version} ({len(objects)} files) to {where}")
    if observability is not None:
        _fill_pull_settings(cluster, endpoint, observability.region)
    if agent.uses_agent(cluster) and agent.publish_token(cluster, only_if_unset=True):
        # Before the stack: the controller's lifecycle script reads it once the cluster is up.
        job.add_log(f"wrote the controller agent's token to {release.agent_token_parameter(inputs['ClusterName'])}")


def _fill_pull_settings(cluster: Cluster, endpoint: str, region: str) -> None:
    """Point the cluster's health pull at the workspace its nodes write to, unless someone set it."""
    settings, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    if settings.pull_url:
        return
    settings.pull_url, settings.auth_kind, settings.aws_region = endpoint, AuthKind.SIGV4, region
    settings.pull_enabled = True
    settings.save(update_fields=["pull_url", "auth_kind", "aws_region", "pull_enabled", "updated"])
