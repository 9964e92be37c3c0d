"""AWS Support's ``CreateCase`` on the embedded endpoint, with the two ways it fails in an account: throttling
(``sandbox.aws.moto_throttle.throttle("CreateCase")``) and an account without a Business or Enterprise support
plan (``without_plan(account)``), which AWS answers with ``SubscriptionRequiredException``.

Used only by the embedded endpoint; :func:`apply` is called by ``sandbox.aws.moto_install.install``.
"""
from __future__ import annotations

import threading
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.support.responses import SupportResponse

from sandbox.aws.moto_throttle import check

_lock = threading.Lock()
_without_plan: set[str] = set()
_applied = False


def without_plan(account: str, missing: bool = True) -> None:
    """Make ``account`` one without a support plan (or give it back its plan)."""
    with _lock:
        (_without_plan.add if missing else _without_plan.discard)(account)


def _create_case(self: Any) -> str:
    check("CreateCase")
    with _lock:
        refused = self.current_account in _without_plan
    if refused:
        raise JsonRESTError("SubscriptionRequiredException",
                            "AWS Premium Support Subscription is required to use this service.")
    return _original_create_case(self)


def apply() -> None:
    global _applied, _original_create_case
    if _applied:
        return
    _original_create_case = SupportResponse.create_case
    SupportResponse.create_case = _create_case
    _applied = True
