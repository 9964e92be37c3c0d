"""The pipeline's steps after the stacks: what CloudFormation cannot create, done once every stack is complete.

- An observability cluster gets its dashboards (GPU health, EFA, nodes) and the Prometheus data source in its
  Grafana workspace (:func:`clusters.health.alerts.grafana.provision_cluster`); CloudFormation has no
  dashboard resource. The launch log says whether its alert topic is subscribed to the portal.
- A HyperPod cluster on EKS gets the software stack's plain manifests applied through the EKS cluster's
  Kubernetes API (:mod:`clusters.launches.kubernetes`): the FSx for Lustre storage class, volume and claim, the DCGM
  counters config map and the EFA exporter. The Helm releases (HyperPod's dependency chart, dcgm-exporter,
  the Prometheus agent) and the NCCL MPIJob stay with ``apply.sh`` (docs/blueprints.md says why).

Each step is idempotent (a dashboard is overwritten, an object server-side applied), so a step that polls
again after a transient failure repeats it whole. A transient failure (unreachable, 5xx, throttling) is a
retryable ``AwsError``: the pipeline retries it up to ``JOB_MAX_AWS_ERRORS`` times in a row, as it does
for CloudFormation calls; a refusal raises :class:`StepFailed` and fails the cluster.
"""
from __future__ import annotations

from clusters.health.alerts import grafana as grafana_provision
from clusters.launches import kubernetes
from clusters.launches import service as launch
from clusters.models import Cluster, LaunchJob
from portal.core.aws import AwsError


class StepFailed(Exception):
    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def provision_dashboards(job: LaunchJob, cluster: Cluster) -> None:
    endpoint = (cluster.parameters.get("observability") or {}).get("AlertEndpointUrl") or ""
    if endpoint:
        job.add_log(f"alert topic subscribed to {endpoint}")
    elif not launch.portal_alert_endpoint():
        job.add_log("alert topic has no subscription: PORTAL_BASE_URL is not an https address, so the portal "
                    "cannot name its SNS endpoint (alerts stay on the topic)")
    try:
        done = grafana_provision.provision_cluster(cluster)
    except grafana_provision.ProvisionError as exc:
        if exc.retryable:
            raise AwsError(str(exc), code="GrafanaUnavailable", retryable=True) from exc
        raise StepFailed(str(exc), "dashboards") from exc
    job.add_log(f"Grafana: data source {done.datasource}; dashboards {', '.join(done.dashboards)}")


def apply_kubernetes(job: LaunchJob, cluster: Cluster) -> None:
    try:
        applied = kubernetes.install_stack(cluster)
    except kubernetes.KubernetesError as exc:
        if exc.retryable:
            raise AwsError(str(exc), code="KubernetesUnavailable", retryable=True) from exc
        raise StepFailed(str(exc), "kubernetes") from exc
    job.add_log(f"applied {len(applied)} objects in the EKS cluster: {', '.join(applied)}")


STEPS = {"observability": provision_dashboards, "hyperpod-eks": apply_kubernetes}


def run(job: LaunchJob, cluster: Cluster, kind: str) -> None:
    """Run the step of the cluster's blueprint (``kind``), if it has one."""
    step = STEPS.get(kind)
    if step is not None:
        step(job, cluster)
