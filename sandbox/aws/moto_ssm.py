"""SSM Run Command as AWS answers it, for moto's server: eventual consistency and AWS's own values.

- SSM shows a command's invocations a moment after ``SendCommand`` answers: a ``GetCommandInvocation`` that
  comes at once gets ``InvocationDoesNotExist``. Here the first ``INVISIBLE_READS`` reads of each invocation
  answer so (reads, not seconds: tests advance by polling, never by waiting), which is what the portal's
  bounded retry (``clusters.provider_states``) is for.
- moto fills a command without a notification configuration with placeholders (``"NotificationArn":
  "string"``); SSM answers empty values, and its errors carry a sentence rather than the operation's name.

Used only by the embedded endpoint; :func:`apply` runs after :func:`sandbox.aws.moto_headnode.apply`, whose
invocations it wraps.
"""
from __future__ import annotations

import threading
from typing import Any

from moto.ssm import models as ssm_models
from moto.ssm.exceptions import SSMException

INVISIBLE_READS = 1  # GetCommandInvocation reads of a new invocation answered InvocationDoesNotExist
EMPTY_NOTIFICATION = {"NotificationArn": "", "NotificationEvents": [], "NotificationType": ""}
_lock = threading.Lock()
_original: dict[str, Any] = {}


def _missing(command_id: str, instance_id: str) -> SSMException:
    return SSMException("InvocationDoesNotExist",
                     f"Command {command_id} has no invocation on instance {instance_id}.")


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    _original["init"](self, *args, **kwargs)
    if kwargs.get("notification_config") is None:
        self.notification_config = dict(EMPTY_NOTIFICATION)


def _get_invocation(self: Any, instance_id: str, plugin_name: str | None) -> dict[str, Any]:
    if not any(i.get("InstanceId") == instance_id for i in self.invocations):
        raise _missing(self.command_id, instance_id)
    with _lock:
        reads = self.__dict__.setdefault("geniac_reads", {})
        reads[instance_id] = reads.get(instance_id, 0) + 1
        visible = reads[instance_id] > INVISIBLE_READS
    if not visible:
        raise _missing(self.command_id, instance_id)
    return _original["get"](self, instance_id, plugin_name)


def apply() -> None:
    """Install the behaviours above on moto's SSM (idempotent)."""
    if "get" in _original:
        return
    _original["init"], _original["get"] = ssm_models.Command.__init__, ssm_models.Command.get_invocation
    ssm_models.Command.__init__ = _init
    ssm_models.Command.get_invocation = _get_invocation
