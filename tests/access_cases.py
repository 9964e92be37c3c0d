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
    # What each role gets on GET when it differs from the default (200 for customer_a, lead_a, pm, staff;
    # ``foreign`` for customer_b and lead_b), e.g. {"customer_a": (403,)} for a lead-only page.
    expect: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Methods the route serves when they cannot be read from the view (function views).
    methods: tuple[str, ...] | None = None


LIST = (200,)
FORBIDDEN = (403,)
# GET expectations of pages only some roles use. "Add" pages name no organization: any lead SA may
# open them (for their own organizations), so lead_b gets the form too.
LEAD_WRITES = {"customer_a": FORBIDDEN, "pm": FORBIDDEN}
LEAD_ADDS = {**LEAD_WRITES, "lead_b": LIST}
PM_WRITES = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}

OBJECTS: dict[str, Callable] = {
    "organization": lambda w: w.org_a,
}

ROUTES: dict[str, Case] = {
    "home": Case(foreign=(302,), expect={"customer_a": (302,), "lead_a": (302,), "pm": (302,), "staff": (302,)}),
    "login": Case(public=True, foreign=(302,)),
    "logout": Case(public=True, foreign=(405,)),
    "healthz": Case(public=True, foreign=(200, 503)),
    "favicon": Case(public=True, foreign=(302,), expect={r: (302,) for r in ("customer_a", "lead_a", "pm", "staff")}),
    "portal:organization_list": Case(foreign=LIST),
    "portal:organization_detail": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    "portal:lead_home": Case(foreign=LIST),
    "portal:overview": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
    "api-root": Case(api=True, foreign=LIST),
    "api-schema": Case(api=True, foreign=LIST),
    "api-docs": Case(api=True, foreign=LIST),
    "api-token": Case(api=True, public=True, foreign=(405,)),
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


# --- workloads: workload records, quotas and capacity ----------------------------------------------
def _workload(w):
    from tests.workloads.factories_workloads import WorkloadFactory

    return WorkloadFactory(organization=w.org_a, name="Alpha 100B", description="ZZ-ORG-A-SECRET plan")


def _quota(w):
    from tests.workloads.factories_workloads import InstanceQuotaFactory

    return InstanceQuotaFactory(organization=w.org_a, notes="ZZ-ORG-A-SECRET allocation")


def _reservation(w):
    from tests.workloads.factories_workloads import CapacityReservationFactory

    return CapacityReservationFactory(organization=w.org_a, notes="ZZ-ORG-A-SECRET block")


def _change_request(w):
    from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory

    quota = InstanceQuotaFactory(organization=w.org_a, notes="ZZ-ORG-A-SECRET allocation")
    return QuotaChangeRequestFactory(quota=quota, justification="ZZ-ORG-A-SECRET needs more")


OBJECTS.update(workload=_workload, quota=_quota, reservation=_reservation, change_request=_change_request)
_WL = {
    "workloads:workload_list": Case(foreign=LIST),
    "workloads:workload_add": Case(foreign=FORBIDDEN, expect=LEAD_ADDS),
    "workloads:workload_detail": Case(kwargs=lambda o: {"pk": o["workload"].pk}),
    "workloads:workload_edit": Case(kwargs=lambda o: {"pk": o["workload"].pk}, expect=LEAD_WRITES),
    "workloads:workload_history": Case(kwargs=lambda o: {"pk": o["workload"].pk}),
    "workloads:workload_section": Case(kwargs=lambda o: {"pk": o["workload"].pk, "section": "model"}),
    "workloads:quota_list": Case(foreign=LIST),
    "workloads:quota_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "workloads:quota_edit": Case(kwargs=lambda o: {"pk": o["quota"].pk}, expect=PM_WRITES),
    "workloads:reservation_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "workloads:reservation_edit": Case(kwargs=lambda o: {"pk": o["reservation"].pk}, expect=PM_WRITES),
    "workloads:changerequest_list": Case(foreign=LIST),
    "workloads:changerequest_add": Case(foreign=FORBIDDEN, expect=LEAD_ADDS),
    "workloads:changerequest_detail": Case(kwargs=lambda o: {"pk": o["change_request"].pk}),
    "workloads:changerequest_edit": Case(kwargs=lambda o: {"pk": o["change_request"].pk}, expect=LEAD_WRITES),
    "workloads:changerequest_decide": Case(kwargs=lambda o: {"pk": o["change_request"].pk}, foreign=(405,)),
    "workloads-api:api-root": Case(api=True, foreign=LIST),
    "workloads-api:workload-list": Case(api=True, foreign=LIST),
    "workloads-api:workload-detail": Case(api=True, kwargs=lambda o: {"pk": o["workload"].pk}),
    "workloads-api:instancequota-list": Case(api=True, foreign=LIST),
    "workloads-api:instancequota-detail": Case(api=True, kwargs=lambda o: {"pk": o["quota"].pk}),
    "workloads-api:capacityreservation-list": Case(api=True, foreign=LIST),
    "workloads-api:capacityreservation-detail": Case(api=True, kwargs=lambda o: {"pk": o["reservation"].pk}),
    "workloads-api:quotachangerequest-list": Case(api=True, foreign=LIST),
    "workloads-api:quotachangerequest-detail": Case(api=True, kwargs=lambda o: {"pk": o["change_request"].pk}),
    "workloads-api:quotachangerequest-decide": Case(
        api=True, kwargs=lambda o: {"pk": o["change_request"].pk}, foreign=(404, 405)
    ),
}
ROUTES.update(_WL)


# clusters: the launch pipeline
def _cluster(w):
    from tests.clusters.factories_clusters import ready_cluster

    return ready_cluster(w.org_a, name="alpha-p5", error_message="ZZ-ORG-A-SECRET")


def _blueprint(w):
    from clusters import catalog

    return catalog.sync()["parallelcluster"]


def _launch_job(w):
    return OBJECTS["cluster"](w).jobs.first()


def _stack_event(w):
    from tests.clusters.factories_clusters import StackEventFactory

    return StackEventFactory(stack=OBJECTS["cluster"](w).stacks.first(), reason="ZZ-ORG-A-SECRET")


OBJECTS.update({"cluster": _cluster, "blueprint": _blueprint, "launch_job": _launch_job, "stack_event": _stack_event})
_cluster_pk = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
ROUTES.update({
    "clusters:cluster_list": Case(foreign=LIST),
    "clusters:launch_day": Case(foreign=LIST),
    "clusters:blueprint_list": Case(foreign=LIST),
    "clusters:blueprint_detail": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST),
    "clusters:launch": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=FORBIDDEN, expect=LEAD_ADDS),
    "clusters:cluster_detail": Case(kwargs=_cluster_pk),
    "clusters:cluster_progress": Case(kwargs=_cluster_pk),
    "clusters:cluster_config": Case(kwargs=_cluster_pk),
    "clusters:cluster_retry": Case(kwargs=_cluster_pk, foreign=(405,), methods=("POST",)),
    "clusters:cluster_delete": Case(kwargs=_cluster_pk, expect=LEAD_WRITES),
    "clusters-api:api-root": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-list": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-detail": Case(api=True, kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST),
    "clusters-api:cluster-list": Case(api=True, foreign=LIST),
    "clusters-api:cluster-detail": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-retry": Case(api=True, kwargs=_cluster_pk, foreign=(405,)),
    "clusters-api:cluster-pcluster-config": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:launchjob-list": Case(api=True, foreign=LIST),
    "clusters-api:launchjob-detail": Case(api=True, kwargs=lambda o: {"pk": o["launch_job"].pk}),
    "clusters-api:stackevent-list": Case(api=True, foreign=LIST),
    "clusters-api:stackevent-detail": Case(api=True, kwargs=lambda o: {"pk": o["stack_event"].pk}),
})
