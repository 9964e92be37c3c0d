"""What each status AWS reports for a node or a command means to the portal, one entry per member of the
service model's enum (``tests/clusters/test_provider_states.py`` fails when botocore's model gains one).

HyperPod's ``ClusterInstanceStatus`` and SSM's ``CommandInvocationStatus`` are read by the remediation loop and the
validation jobs; a status met only by accident (``Cancelling`` read as finished, ``DeepHealthCheckInProgress`` as
"down for good") turns a healthy action into a failed one. Each is decided here, with the reason.

SSM is eventually consistent: ``GetCommandInvocation`` right after ``SendCommand`` may answer
``InvocationDoesNotExist`` (the invocation is not yet visible). :func:`invocation_not_visible_yet` lets the
callers read that as "Pending" for ``SSM_INVISIBLE_SECONDS`` from the first such answer, then as the error it is.
"""
from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

# HyperPod ClusterInstanceStatus → what the remediation loop does with a node in it.
UP, WAIT, FAILED, GONE = "up", "wait", "failed", "gone"
HYPERPOD_NODE = {
    "Running": UP,
    "Pending": WAIT,  # provisioning, or rebooting
    "ShuttingDown": WAIT,  # the old instance of a replacement goes away first
    "SystemUpdating": WAIT,  # a software update HyperPod runs; the node comes back Running
    "DeepHealthCheckInProgress": WAIT,  # HyperPod's deep health check after a replace (or one the portal started)
    "AttachInProgress": WAIT,  # a node moved into the cluster is being attached
    "NotFound": WAIT,  # the instance is gone and its replacement not yet listed: the deadline bounds the wait
    "Failure": FAILED,  # HyperPod could not bring it back
    "DetachInProgress": GONE,  # leaving the cluster (deleted or moved): nothing left to verify
}

# SSM CommandInvocationStatus → whether the command is still running, succeeded, or ended without success.
RUNNING, SUCCESS, UNSUCCESSFUL = "running", "success", "unsuccessful"
SSM_INVOCATION = {
    "Pending": RUNNING,
    "InProgress": RUNNING,
    "Delayed": RUNNING,  # the agent could not be reached yet; SSM retries it
    "Cancelling": RUNNING,  # ends Cancelled: wait for the final status rather than read a half-cancelled output
    "Success": SUCCESS,
    "Failed": UNSUCCESSFUL,
    "TimedOut": UNSUCCESSFUL,
    "Cancelled": UNSUCCESSFUL,
}


def hyperpod_node(status: str) -> str:
    """The meaning of a node status; one the model does not know (a newer service) is waited on, bounded by the
    action's deadline."""
    return HYPERPOD_NODE.get(status, WAIT)


def ssm_running(status: str) -> bool:
    """Whether an invocation in ``status`` is still running (an unknown status: not finished, bounded by the
    caller's deadline)."""
    return SSM_INVOCATION.get(status, RUNNING) == RUNNING


def invocation_not_visible_yet(exc: Exception, command_id: str, instance_id: str) -> bool:
    """Whether ``exc`` is SSM's ``InvocationDoesNotExist`` within the time SSM takes to show a new invocation
    (counted from the first time this command was answered so); past it, the error stands."""
    if getattr(exc, "code", "") != "InvocationDoesNotExist":
        return False
    key = f"ssm-invisible:{command_id}:{instance_id}"
    now = timezone.now().timestamp()
    grace = settings.SSM_INVISIBLE_SECONDS
    cache.add(key, now, timeout=int(grace * 4) + 60)
    first = cache.get(key, now)
    return now - float(first) < grace
