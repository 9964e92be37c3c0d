"""What quota requests and expiry warnings write on the timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import Message, define, message
from workloads.choices import RequestStatus


def status_label(value) -> str:
    """'approved', 'rejected': a request's status in the middle of a sentence."""
    try:
        return str(RequestStatus(value).label).lower()
    except ValueError:
        return str(value)


CHANGE = define("quota.describe_change", gettext_noop("%(type)s in %(region)s: %(current)s → %(requested)s"))
NEW = define("quota.describe_new", gettext_noop("new quota of %(count)s × %(type)s in %(region)s (%(start)s → %(end)s)"))
REQUESTED = define("quota.requested", gettext_noop("Quota change requested: %(what)s"))
EDITED = define("quota.request_edited", gettext_noop("Quota change request edited: %(what)s"))
DECIDED = define("quota.decided", gettext_noop("Quota change %(status)s: %(what)s"), {"status": status_label})
QUOTA_ENDS_DAY = define("quota.ends_in_day", gettext_noop("Quota ends in %(days)s day: %(what)s"))
QUOTA_ENDS_DAYS = define("quota.ends_in_days", gettext_noop("Quota ends in %(days)s days: %(what)s"))
RESERVATION_ENDS_DAY = define("reservation.ends_in_day", gettext_noop("Capacity reservation ends in %(days)s day: %(what)s"))
RESERVATION_ENDS_DAYS = define("reservation.ends_in_days",
                               gettext_noop("Capacity reservation ends in %(days)s days: %(what)s"))
ENDS_ON = define("quota.ends_on", gettext_noop("Ends on %(day)s."))


def describe(req) -> Message:
    """What a quota change request asks, as a message (names, numbers and days as parameters)."""
    if req.quota_id:
        return message(CHANGE, type=req.instance_type_name, region=req.region, current=req.current_count,
                       requested=req.requested_count)
    return message(NEW, count=req.requested_count, type=req.instance_type_name, region=req.region,
                   start=str(req.start), end=str(req.end))


def ends_in(kind: str, days: int, what: str) -> Message:
    if kind == "quota":
        return message(QUOTA_ENDS_DAY if days == 1 else QUOTA_ENDS_DAYS, days=days, what=what)
    return message(RESERVATION_ENDS_DAY if days == 1 else RESERVATION_ENDS_DAYS, days=days, what=what)
