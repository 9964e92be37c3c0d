"""HyperPod's own signals for moto's server, which has none: ``ListClusterEvents``, ``DescribeClusterEvent`` and
``StartClusterHealthCheck``, in the shapes of botocore's SageMaker model (the model checks of
:mod:`sandbox.aws.model_validation` hold every request and answer to them).

HyperPod records an event when it starts and finishes work on an instance: a reboot or a replacement (asked through
``BatchReboot/ReplaceClusterNodes``, or its own automatic node recovery) and a deep health check. Here the same:
an operation records its "started" event, and the read that brings the node back (the status moves of
:mod:`sandbox.aws.moto_hyperpod_nodes`, one per read) records its end. The descriptions follow the wording of
HyperPod's events reference ("Instance <operation> in Cluster <name> and InstanceGroup <group> <outcome>");
``DescribeClusterEvent`` adds the node's logical id (``EventMetadata.Instance.NodeLogicalId``), and the failure's
text for a failed check.

A deep health check takes each named node (all of its group's when ``InstanceIds`` is left out) through
``DeepHealthCheckInProgress`` (``TICKS`` reads) back to ``Running``, or to ``Failure`` for a node the tests said
would fail (:func:`fail_next_health_check`). Only a ``Running`` node may be checked, as HyperPod refuses a node
that is busy.

The tests' and the demo's hooks, in the server's process: :func:`replace_on_its_own` and :func:`reboot_on_its_own`
(HyperPod's automatic node recovery acting without the portal), :func:`fail_next_health_check`, :func:`add_events`
(a burst of events, for paging) and :func:`events_of`.

``ListClusterEvents`` pages by an opaque token (the offset, signed with the filters it was made for, so a token of
another request is refused as AWS refuses it), ``MaxResults`` up to 100.

Used only by the embedded endpoint; :func:`apply` is called by ``sandbox.aws.moto_install.install``.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
import uuid
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.sagemaker import models as sm_models
from moto.sagemaker.responses import SageMakerResponse

from sandbox.aws import moto_hyperpod_nodes as nodes
from sandbox.aws.moto_throttle import check as _check_throttle

PAGE_DEFAULT = 100  # MaxResults when the request names none (the model's maximum)
CHECK_TYPES = ("InstanceStress", "InstanceConnectivity", "MultiNodeTrainingValidation")
FAILURE_MESSAGE = "The instance failed deep health checks ({checks}): GPU stress test reported errors."
_applied = False


def _time(cluster: Any) -> datetime.datetime:
    """Now, to the millisecond as AWS answers timestamps, and after the cluster's last event (two events never
    share a time here, so a reader's "after this event" is exact)."""
    now = datetime.datetime.now(datetime.UTC)
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)
    events = _events(cluster)
    return max(now, events[-1]["EventTime"] + datetime.timedelta(milliseconds=1)) if events else now


def _events(cluster: Any) -> list[dict[str, Any]]:
    return cluster.__dict__.setdefault("geniac_events", [])


def _record(cluster: Any, node: Any, operation: str, outcome: str, level: str, *, instance_id: str = "",
            failure: str = "") -> dict[str, Any]:
    """One Instance event of ``cluster`` about ``node``."""
    event = {
        "EventId": str(uuid.uuid4()), "ClusterArn": cluster.arn, "ClusterName": cluster.cluster_name,
        "InstanceGroupName": node.instance_group_name, "InstanceId": instance_id or node.instance_id,
        "ResourceType": "Instance", "EventTime": _time(cluster), "EventLevel": level,
        "Description": f"Instance {operation} in Cluster {cluster.cluster_name} and InstanceGroup "
                       f"{node.instance_group_name} {outcome}",
        "geniac_metadata": {"NodeLogicalId": node.logical_id, **({"FailureMessage": failure} if failure else {})},
    }
    _events(cluster).append(event)
    return event


def _start(cluster: Any, node: Any, operation: str) -> None:
    """``node`` begins ``operation`` (reboot, replacement, deep health check): its started event, and what its
    end will be recorded as."""
    node.geniac_operation = operation
    _record(cluster, node, operation, "started", "Info" if operation == "deep health check" else "Warn")


def on_status(cluster: Any, node: Any) -> None:
    """A listener of :mod:`sandbox.aws.moto_hyperpod_nodes`: a node's read moved its status on."""
    operation = getattr(node, "geniac_operation", "")
    if not operation or node.pending:
        return
    node.geniac_operation = ""
    if node.status == "Failure":
        checks = ", ".join(getattr(node, "geniac_checks", ()) or CHECK_TYPES[:1])
        _record(cluster, node, operation, "failed", "Error", failure=FAILURE_MESSAGE.format(checks=checks))
    elif node.status == "Running":
        _record(cluster, node, operation, "passed" if operation == "deep health check" else "succeeded", "Info")


def _summary(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if not k.startswith("geniac_")}


def _find(self: Any) -> Any:
    name = self._get_param("ClusterName") or ""
    try:
        return nodes._cluster(self.sagemaker_backend, name)
    except sm_models.ValidationError:
        raise JsonRESTError("ResourceNotFound", f"Cluster {name.rsplit('/', 1)[-1]} not found.") from None


def _when(value: Any) -> datetime.datetime | None:
    """A timestamp of the request, as moto's parser reads it (a datetime), or epoch seconds or ISO 8601."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime.datetime):  # moto's parser gives one, without its zone (UTC)
        return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
    if isinstance(value, int | float):
        return datetime.datetime.fromtimestamp(value, datetime.UTC)
    return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _token(filters: dict[str, Any], offset: int) -> str:
    # filters hold datetimes (EventTimeAfter/Before): str() is enough to tell two requests apart
    signed = hashlib.sha256(json.dumps(filters, sort_keys=True, default=str).encode()).hexdigest()[:16]
    body = json.dumps({"o": offset, "f": signed})
    return base64.urlsafe_b64encode(body.encode()).decode()


def _offset(filters: dict[str, Any], token: str) -> int:
    try:
        body = json.loads(base64.urlsafe_b64decode(token.encode()))
        offset = int(body["o"])
    except (ValueError, KeyError, TypeError):
        raise JsonRESTError("ValidationException", "The NextToken is not valid.") from None
    if _token(filters, offset) != token:
        raise JsonRESTError("ValidationException", "The NextToken does not belong to this request.")
    return offset


def list_cluster_events(self: Any) -> ActionResult:
    _check_throttle("ListClusterEvents")
    cluster = _find(self)
    for node in list(cluster.nodes.values()):  # HyperPod moves on without being read; here a read moves it
        nodes._advance(cluster, node)
    filters = {name: self._get_param(name) for name in (
        "InstanceGroupName", "NodeId", "EventTimeAfter", "EventTimeBefore", "ResourceType", "OperationId",
        "SortOrder")}
    after, before = _when(filters["EventTimeAfter"]), _when(filters["EventTimeBefore"])
    found = [e for e in _events(cluster)
             if (not filters["InstanceGroupName"] or e.get("InstanceGroupName") == filters["InstanceGroupName"])
             and (not filters["NodeId"] or e.get("InstanceId") == filters["NodeId"])
             and (not filters["ResourceType"] or e["ResourceType"] == filters["ResourceType"])
             and (not filters["OperationId"] or e.get("OperationId") == filters["OperationId"])
             and (after is None or e["EventTime"] > after) and (before is None or e["EventTime"] < before)]
    found.sort(key=lambda e: e["EventTime"], reverse=filters["SortOrder"] == "Descending")
    size = self._get_param("MaxResults") or PAGE_DEFAULT
    token = self._get_param("NextToken")
    start = _offset(filters, token) if token else 0
    page = found[start:start + size]
    answer: dict[str, Any] = {"Events": [_summary(e) for e in page]}
    if start + size < len(found):
        answer["NextToken"] = _token(filters, start + size)
    return ActionResult(answer)


def describe_cluster_event(self: Any) -> ActionResult:
    cluster = _find(self)
    event_id = self._get_param("EventId")
    event = next((e for e in _events(cluster) if e["EventId"] == event_id), None)
    if event is None:
        raise JsonRESTError("ResourceNotFound", f"Event {event_id} not found in cluster {cluster.cluster_name}.")
    detail = {**_summary(event), "EventDetails": {"EventMetadata": {"Instance": dict(event["geniac_metadata"])}}}
    return ActionResult({"EventDetails": detail})


def start_cluster_health_check(self: Any) -> ActionResult:
    _check_throttle("StartClusterHealthCheck")
    cluster = _find(self)
    groups = {g["InstanceGroupName"] for g in cluster.instance_groups}
    chosen: list[tuple[Any, list[str]]] = []
    for config in self._get_param("DeepHealthCheckConfigurations") or []:
        group = config["InstanceGroupName"]
        if group not in groups:
            raise JsonRESTError("ValidationException", f"Instance group {group} is not in cluster "
                                                       f"{cluster.cluster_name}.")
        members = {n.instance_id: n for n in cluster.nodes.values() if n.instance_group_name == group}
        for instance_id in config.get("InstanceIds") or list(members):
            node = members.get(instance_id)
            if node is None:
                raise JsonRESTError("ValidationException", f"Instance {instance_id} is not in instance group {group} "
                                                           f"of cluster {cluster.cluster_name}.")
            if node.status != "Running" or node.pending:
                raise JsonRESTError("ValidationException", f"Instance {instance_id} is {node.status}; deep health "
                                                           "checks run on Running instances only.")
            chosen.append((node, list(config["DeepHealthChecks"])))
    failing = cluster.__dict__.setdefault("geniac_failing_checks", set())
    for node, checks in chosen:
        end = "Failure" if node.hostname in failing else "Running"
        failing.discard(node.hostname)
        node.pending = ["DeepHealthCheckInProgress"] * nodes.TICKS + [end]
        node.replacement = None
        node.geniac_checks = checks
        _start(cluster, node, "deep health check")
    return ActionResult({"ClusterArn": cluster.arn})


def _batch_with_events(original: Any, operation: str) -> Any:
    def batch(self: Any) -> ActionResult:
        answer = original(self)
        cluster = _find(self)
        for node_id in answer.result.get("Successful", []):
            node = cluster.nodes.get(node_id)
            if node is not None:
                _start(cluster, node, operation)
        return answer
    return batch


def _on_its_own(cluster_name: str, hostname: str, replace: bool) -> None:
    cluster = nodes.emulated_cluster(cluster_name)
    node = next(n for n in cluster.nodes.values() if n.hostname == hostname)
    statuses = ["ShuttingDown", "Pending"] if replace else ["Pending"]
    node.pending = [s for s in statuses for _ in range(nodes.TICKS)] + ["Running"]
    node.replacement = nodes._instance_id() if replace else None
    _start(cluster, node, "replacement" if replace else "reboot")


def replace_on_its_own(cluster_name: str, hostname: str) -> None:
    """HyperPod's automatic node recovery replaces ``hostname`` (no request of the portal's)."""
    _on_its_own(cluster_name, hostname, replace=True)


def reboot_on_its_own(cluster_name: str, hostname: str) -> None:
    """HyperPod's automatic node recovery reboots ``hostname``."""
    _on_its_own(cluster_name, hostname, replace=False)


def fail_next_health_check(cluster_name: str, hostname: str) -> None:
    """The next deep health check of ``hostname`` ends in ``Failure``."""
    nodes.emulated_cluster(cluster_name).__dict__.setdefault("geniac_failing_checks", set()).add(hostname)


def add_events(cluster_name: str, hostname: str, count: int) -> None:
    """``count`` finished reboots of ``hostname`` as HyperPod would have recorded them (two events each)."""
    cluster = nodes.emulated_cluster(cluster_name)
    node = next(n for n in cluster.nodes.values() if n.hostname == hostname)
    for _ in range(count):
        _record(cluster, node, "reboot", "started", "Warn")
        _record(cluster, node, "reboot", "succeeded", "Info")


def events_of(cluster_name: str) -> list[dict[str, Any]]:
    return [_summary(e) for e in _events(nodes.emulated_cluster(cluster_name))]


def apply() -> None:
    """Install the operations above on moto's SageMaker (idempotent; after :mod:`sandbox.aws.moto_hyperpod_nodes`,
    whose batch operations it wraps)."""
    global _applied
    if _applied:
        return
    SageMakerResponse.list_cluster_events = list_cluster_events
    SageMakerResponse.describe_cluster_event = describe_cluster_event
    SageMakerResponse.start_cluster_health_check = start_cluster_health_check
    SageMakerResponse.batch_reboot_cluster_nodes = _batch_with_events(SageMakerResponse.batch_reboot_cluster_nodes,
                                                                      "reboot")
    SageMakerResponse.batch_replace_cluster_nodes = _batch_with_events(
        SageMakerResponse.batch_replace_cluster_nodes, "replacement")
    nodes.LISTENERS.append(on_status)
    _applied = True
