"""How to reach every route of the portal with organization A's objects.

The route walker (tests/portal/test_routes.py) fails for any URL pattern or API route that is not
listed here, so a new view cannot ship without an access test. Each app adds:

- ``OBJECTS[key] = builder(world) -> object of organization A`` (its text fields carry MARKER_A),
- ``ROUTES[url_name] = Case(...)``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """``kwargs(objs)`` builds the URL's kwargs from org A's objects (``objs['organization']`` …).

    ``foreign``: what a customer of organization B gets (404 for A's objects; 200 with nothing of A's
    for lists; 403 for pages of a role B's customer does not hold).
    """

    kwargs: Callable[[dict], dict] = field(default=lambda objs: {})
    foreign: tuple[int, ...] = (404,)
    api: bool = False
    # Pages: what anonymous gets. Login redirect (302) unless public.
    public: bool = False


LIST = (200,)
FORBIDDEN = (403,)

OBJECTS: dict[str, Callable] = {
    "organization": lambda w: w.org_a,
}

ROUTES: dict[str, Case] = {
    "home": Case(foreign=(302,)),
    "login": Case(public=True, foreign=(302,)),
    "logout": Case(public=True, foreign=(405,)),
    "healthz": Case(public=True, foreign=(200, 503)),
    "portal:organization_list": Case(foreign=LIST),
    "portal:organization_detail": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    "portal:lead_home": Case(foreign=LIST),
    "portal:overview": Case(foreign=FORBIDDEN),
    "api-root": Case(api=True, foreign=LIST),
    "api-schema": Case(api=True, foreign=LIST),
    "api-docs": Case(api=True, foreign=LIST),
    "api-redoc": Case(api=True, foreign=LIST),
    "portal-api:api-root": Case(api=True, foreign=LIST),
    "portal-api:organization-list": Case(api=True, foreign=LIST),
    "portal-api:organization-detail": Case(api=True, kwargs=lambda o: {"pk": o["organization"].pk}),
    "portal-api:membership-list": Case(api=True, foreign=LIST),
    "portal-api:membership-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["organization"].memberships.first().pk}
    ),
    "portal-api:timelineentry-list": Case(api=True, foreign=LIST),
    "portal-api:timelineentry-detail": Case(api=True, kwargs=lambda o: {"pk": o["timeline_entry"].pk}),
}


def _timeline_entry(w):
    from portal import timeline

    return timeline.record(w.org_a, "note", "ZZ-ORG-A-SECRET kickoff", visibility="shared")


OBJECTS["timeline_entry"] = _timeline_entry

# Namespaces whose routes are outside the walker (Django's own admin has its own staff-only guard;
# tests/portal/test_admin.py covers it).
SKIP_NAMESPACES = ("admin",)
