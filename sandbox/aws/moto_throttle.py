"""Throttling on the embedded endpoint, for the tests of the portal's backoff: ``throttle(operation, times)`` makes
the next ``times`` calls of an operation the emulation checks (``check(operation)`` at its top) answer
``ThrottlingException``, as AWS does when a caller goes too fast."""
from __future__ import annotations

import threading

from moto.core.exceptions import JsonRESTError

_lock = threading.Lock()
_throttled: dict[str, int] = {}


def throttle(operation: str, times: int = 1) -> None:
    """The next ``times`` calls of ``operation`` (``"BatchRebootClusterNodes"``, ``"CreateCase"`` …) are throttled."""
    with _lock:
        _throttled[operation] = times


def check(operation: str) -> None:
    with _lock:
        left = _throttled.get(operation, 0)
        if left <= 0:
            return
        _throttled[operation] = left - 1
    raise JsonRESTError("ThrottlingException", "Rate exceeded")
