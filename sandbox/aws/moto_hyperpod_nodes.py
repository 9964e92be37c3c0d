"""HyperPod node operations for moto's server: ``BatchRebootClusterNodes``, ``BatchReplaceClusterNodes`` and the
node status transitions that follow them.

moto's SageMaker names a cluster's nodes ``<group>-<n>`` (which boto3 refuses as node ids, ``i-…``), gives them no
hostname (nor the ``arn`` its ListClusterNodes pages by, so past 100 nodes every page was the first) and keeps every
node ``Running``. Here each node gets an instance id, a logical id and a private DNS
hostname (``ip-10-1-<group>-<n+10>``, what Slurm and the health reports call it); a reboot takes the node through
``Pending`` and back to ``Running``, a replacement through ``ShuttingDown`` and ``Pending`` to a new instance id
under the same logical id and hostname. A status moves on each time a client reads the node (``TICKS`` reads), so
tests and the demo advance by polling, never by waiting. ``throttle(operation, times)`` makes the next calls of
an operation answer ``ThrottlingException`` (the tests' hook for AWS slowing the portal down).

A node that comes back from a reboot or a replacement boots with its exporters, which push the node's health to
the portal. Here the emulated node does the same when its cluster carries the tags of ``sandbox.aws.tags`` (the
portal's push URL for the cluster and its ingestion token), as the demo's remediation cluster does:
``REPORT_DELAY`` seconds after it is ``Running`` again it posts a healthy dcgm-exporter exposition (the health
samples' healthy P5 node under its own hostname). Without the tags nothing is posted.

Used only by the embedded endpoint; :func:`apply` is called by ``sandbox.aws.moto_install.install``.
"""
from __future__ import annotations

import threading
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.moto_api._internal import mock_random
from moto.sagemaker import models as sm_models
from moto.sagemaker.responses import SageMakerResponse

from sandbox.aws.moto_throttle import check as _check_throttle
from sandbox.aws.moto_throttle import throttle  # noqa: F401 - the tests' hook, here since it began here
from sandbox.aws.tags import HEALTH_PUSH_TOKEN, HEALTH_PUSH_URL

TICKS = 2  # reads a node stays in each passing status
BATCH_LIMIT = 25  # node ids per request, as the API documents
REPORT_DELAY = 1.0  # seconds from Running to the node's first push
# Called as ``listener(cluster, node)`` after a read moved a node's status on (sandbox.aws.moto_cluster_events
# records HyperPod's cluster events from them).
LISTENERS: list[Any] = []
HEALTHY_SAMPLE = Path(__file__).resolve().parents[1] / "demo_samples" / "dcgm_p5_healthy.prom"
SAMPLE_HOST = "ip-10-1-45-12"
_applied = False


def _instance_id() -> str:
    return "i-" + "".join(mock_random.choice("0123456789abcdef") for _ in range(17))


def _dns_name(hostname: str, region: str) -> str:
    """The private DNS name EC2 gives an instance (``ip-10-1-0-10.ap-northeast-1.compute.internal``), which is
    what ``PrivateDnsHostname`` carries; Slurm and the exporters use its first label."""
    return f"{hostname}.{'ec2.internal' if region == 'us-east-1' else f'{region}.compute.internal'}"


def _cluster_id() -> str:
    return "".join(mock_random.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(12))


class _Clusters(dict):
    """A backend's clusters by name, found by their id too (the ARN's last part), as SageMaker finds them.

    SageMaker's ARN ends ``cluster/<12-character id>``; moto's ended with the name, which the model's pattern
    refuses, and moto looks a cluster up by an ARN's last part."""

    def _name(self, key: Any) -> Any:
        if dict.__contains__(self, key):
            return key
        return next((name for name, cluster in self.items() if cluster.arn.rsplit("/", 1)[-1] == key), key)

    def get(self, key: Any, default: Any = None) -> Any:
        return dict.get(self, self._name(key), default)

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self, self._name(key))

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, self._name(key))

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, self._name(key))


def _cluster_init(self: Any, *args: Any, **kwargs: Any) -> None:
    _original_cluster_init(self, *args, **kwargs)
    self.arn = f"{self.arn.rsplit('/', 1)[0]}/{_cluster_id()}"


def _create_cluster(self: Any, *args: Any, **kwargs: Any) -> Any:
    if not isinstance(self.clusters, _Clusters):
        self.clusters = _Clusters(self.clusters)
    return _original_create_cluster(self, *args, **kwargs)


def prepare(cluster: Any) -> None:
    """Give the cluster's nodes instance ids, logical ids and hostnames (once)."""
    if getattr(cluster, "geniac_nodes_ready", False):
        return
    renamed = {}
    groups = [g["InstanceGroupName"] for g in cluster.instance_groups]
    for old_id, node in cluster.nodes.items():
        group = groups.index(node.instance_group_name) if node.instance_group_name in groups else 0
        index = int(old_id.rsplit("-", 1)[-1]) if old_id.rsplit("-", 1)[-1].isdigit() else len(renamed)
        node.instance_id = _instance_id()
        node.logical_id = f"{node.instance_group_name}-{index}"
        # 10.1.<group>.<n+10> while it fits an octet; past 249 nodes, 10.1.<group + 100·k>.<…> (a real address)
        third, fourth = group + 100 * ((index + 10) // 250), (index + 10) % 250
        node.hostname = f"ip-10-1-{third}-{fourth}"
        # moto pages ListClusterNodes by a node's ``arn``, which its nodes lack: every page would be the first.
        node.arn = f"{cluster.arn}/node/{node.logical_id}"
        node.private_ip = f"10.1.{third}.{fourth}"
        node.dns_name = _dns_name(node.hostname, cluster.region_name)
        node.pending = []
        node.replacement = None
        renamed[node.instance_id] = node
    cluster.nodes = renamed
    cluster.geniac_nodes_ready = True


def _cluster(backend: Any, name: str) -> Any:
    if name.startswith("arn:"):
        name = name.split("/")[-1]
    cluster = backend.clusters.get(name)
    if cluster is None:
        raise sm_models.ValidationError(message=f"Could not find cluster '{name}'.")
    prepare(cluster)
    return cluster


def _advance(cluster: Any, node: Any) -> None:
    """One read of ``node``: move it one tick along its pending statuses."""
    if not node.pending:
        return
    node.status = node.pending.pop(0)
    if node.status == "Running" and not node.pending:
        _report_back(cluster, node.hostname)
    if node.status == "Pending" and node.replacement and node.instance_id != node.replacement:
        cluster.nodes.pop(node.instance_id, None)
        node.instance_id = node.replacement
        node.launch_time = sm_models.utcnow()
        cluster.nodes[node.instance_id] = node
    for listener in LISTENERS:
        listener(cluster, node)


def _report_back(cluster: Any, hostname: str) -> None:
    """Post the node's healthy exposition to the portal, later, when the cluster's tags say where."""
    tags = {t.get("Key"): t.get("Value", "") for t in cluster.tags or []}
    url, token = tags.get(HEALTH_PUSH_URL, ""), tags.get(HEALTH_PUSH_TOKEN, "")
    if not url.startswith(("http://", "https://")) or not token:
        return
    timer = threading.Timer(REPORT_DELAY, post_report, args=(url, token, hostname))
    timer.daemon = True
    timer.start()


def healthy_exposition(hostname: str) -> str:
    """A healthy P5 node's dcgm-exporter text under ``hostname``."""
    return HEALTHY_SAMPLE.read_text().replace(SAMPLE_HOST, hostname)


def post_report(url: str, token: str, hostname: str) -> int:
    target = f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode({'scope': 'nodes', 'nodes': hostname})}"
    request = urllib.request.Request(target, data=healthy_exposition(hostname).encode(), method="POST",  # noqa: S310
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the scheme is checked above
            return int(response.status)
    except OSError:  # the portal is down or refused it: a real exporter pushes again later; the emulation does not
        return 0


# What HyperPod says of a node in each status (moto answered "message" for every one).
STATUS_MESSAGES = {
    "Pending": "The instance is being provisioned and the lifecycle scripts are running.",
    "ShuttingDown": "The instance is being terminated; a replacement will be provisioned under the same node.",
    "SystemUpdating": "The instance is applying a software update.",
    "DeepHealthCheckInProgress": "Deep health checks are running on the instance.",
    "Failure": "The instance failed its health checks.",
}


def _status(node: Any) -> dict[str, Any]:
    message = STATUS_MESSAGES.get(node.status)
    return {"Status": node.status, **({"Message": message} if message else {})}


def _details(node: Any) -> dict[str, Any]:
    return {"NodeLogicalId": node.logical_id, "PrivateDnsHostname": node.dns_name,
            "PrivatePrimaryIp": node.private_ip, "InstanceStatus": _status(node)}


def _describe(self: Any) -> dict[str, Any]:
    return {**_original_describe(self), **(_details(self) if hasattr(self, "logical_id") else {})}


def _summary(self: Any) -> dict[str, Any]:
    """A node's summary as ListClusterNodes gives it: its hostname always, its logical id (dropped by
    :func:`_list_cluster_nodes` unless the request asks for it with ``IncludeNodeLogicalIds``)."""
    extra = {"NodeLogicalId": self.logical_id, "PrivateDnsHostname": self.dns_name,
             "InstanceStatus": _status(self)} if hasattr(self, "logical_id") else {}
    return {**_original_summary(self), **extra}


def _list_cluster_nodes(self: Any) -> ActionResult:
    cluster = _cluster(self.sagemaker_backend, self._get_param("ClusterName"))
    for node in list(cluster.nodes.values()):
        _advance(cluster, node)
    answer = _original_list(self)
    if self._get_param("IncludeNodeLogicalIds") is not True:
        for summary in answer.result["ClusterNodeSummaries"]:
            summary.pop("NodeLogicalId", None)
    return answer


def _describe_cluster_node(self: Any) -> ActionResult:
    cluster = _cluster(self.sagemaker_backend, self._get_param("ClusterName"))
    node = cluster.nodes.get(self._get_param("NodeId"))
    if node is not None:
        _advance(cluster, node)
    return _original_describe_node(self)


def _batch(self: Any, operation: str, statuses: list[str], replace: bool) -> ActionResult:
    _check_throttle(operation)
    cluster = _cluster(self.sagemaker_backend, self._get_param("ClusterName"))
    node_ids = self._get_param("NodeIds") or []
    if not 1 <= len(node_ids) <= BATCH_LIMIT:
        raise JsonRESTError("ValidationException", f"NodeIds must hold 1 to {BATCH_LIMIT} node ids")
    ok, failed = [], []
    for node_id in node_ids:
        node = cluster.nodes.get(node_id)
        if node is None:
            failed.append({"NodeId": node_id, "ErrorCode": "InstanceIdNotFound",
                           "Message": f"Node {node_id} is not in cluster {cluster.cluster_name}"})
        elif node.status != "Running" or node.pending:
            failed.append({"NodeId": node_id, "ErrorCode": "InvalidInstanceStatus",
                           "Message": f"Node {node_id} is {node.status}, not Running"})
        else:
            node.pending = [s for s in statuses for _ in range(TICKS)] + ["Running"]
            node.replacement = _instance_id() if replace else None
            ok.append(node_id)
    return ActionResult({"Successful": ok, "Failed": failed})


def _batch_reboot(self: Any) -> ActionResult:
    return _batch(self, "BatchRebootClusterNodes", ["Pending"], replace=False)


def _batch_replace(self: Any) -> ActionResult:
    return _batch(self, "BatchReplaceClusterNodes", ["ShuttingDown", "Pending"], replace=True)


def node(cluster_name: str, hostname: str) -> Any:
    """The emulated node of ``cluster_name`` named ``hostname``, in any account and region (in the server's
    process: tests and the demo look at what the portal did)."""
    return next(n for n in emulated_cluster(cluster_name).nodes.values() if n.hostname == hostname)


def emulated_cluster(cluster_name: str) -> Any:
    """The emulated HyperPod cluster ``cluster_name``, its nodes prepared, in any account and region."""
    for account in list(sm_models.sagemaker_backends.values()):
        for backend in list(account.values()):
            if cluster_name in backend.clusters:
                return _cluster(backend, cluster_name)
    raise LookupError(f"no emulated HyperPod cluster {cluster_name}")


def apply() -> None:
    """Install the operations above on moto's SageMaker (idempotent)."""
    global _applied, _original_describe, _original_summary, _original_list, _original_describe_node
    global _original_cluster_init, _original_create_cluster
    if _applied:
        return
    _original_cluster_init, _original_create_cluster = sm_models.Cluster.__init__, sm_models.SageMakerModelBackend.create_cluster
    sm_models.Cluster.__init__ = _cluster_init
    sm_models.SageMakerModelBackend.create_cluster = _create_cluster
    _original_describe, _original_summary = sm_models.ClusterNode.describe, sm_models.ClusterNode.summary
    _original_list, _original_describe_node = SageMakerResponse.list_cluster_nodes, SageMakerResponse.describe_cluster_node
    sm_models.ClusterNode.describe = _describe
    sm_models.ClusterNode.summary = _summary
    SageMakerResponse.list_cluster_nodes = _list_cluster_nodes
    SageMakerResponse.describe_cluster_node = _describe_cluster_node
    SageMakerResponse.batch_reboot_cluster_nodes = _batch_reboot
    SageMakerResponse.batch_replace_cluster_nodes = _batch_replace
    _applied = True
