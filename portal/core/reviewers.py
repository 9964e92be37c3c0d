"""What a call's reviewer reaches, for the access policy's reviewer scopes: the applications, versions and
assignments of the review assignments the reviewer holds (no declared conflict, no organization of theirs)."""
from __future__ import annotations

from django.db.models import Q

from portal.core.signals import Hook

# (user, the ids of the user's own organizations) -> the review assignments the user holds and may act on. The
# calls app, above the core, provides it in its ready().
ASSIGNMENTS = Hook("access: a reviewer's assignments", provider="calls")


def applications(user, own: frozenset[int]) -> Q:
    return Q(pk__in=ASSIGNMENTS(user, own).values("application_id"))


def versions(user, own: frozenset[int]) -> Q:
    return Q(application_id__in=ASSIGNMENTS(user, own).values("application_id"))


def assignments(user, own: frozenset[int]) -> Q:
    return Q(pk__in=ASSIGNMENTS(user, own).values("pk"))
