"""How to reach every route of the portal with organization A's objects, and what every role gets.

The route walker (tests/portal/test_routes.py) fails for any URL pattern (named or not) that is not
listed here, so a new view cannot ship without an access test; the access matrix
(tests/portal/test_access_matrix.py) sends every method a route serves as every role in ``ROLES`` and
asserts one exact status per (route, role, method). Each app adds:

- ``OBJECTS[key] = builder(world) -> object of organization A`` (its text fields carry MARKER_A),
- ``ROUTES[url_name] = Case(...)``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Every role the matrix plays. ``specialist`` answers escalations sent to the "frameworks" team and holds
# no organization role (tests/engagement/factories_engagement.specialist makes one).
ROLES = ("anonymous", "customer_a", "customer_b", "lead_a", "lead_b", "pm", "staff", "specialist")
# Roles outside organization A: by default they get ``Case.foreign``.
OUTSIDERS = ("customer_b", "lead_b", "specialist")
LOGIN = "login"  # an expectation: a redirect to the sign-in page


@dataclass(frozen=True)
class Case:
    """How to build the route's URL and what each role gets.

    ``kwargs(objs)`` builds the URL's kwargs from org A's objects (``objs['organization']`` ...).
    ``foreign``: what a role outside organization A gets (404 for A's objects; 200 with nothing of A's
    for lists; 403 for pages of a role it does not hold). ``expect[role]`` overrides the read status
    (default: 200 for customer_a, lead_a, pm, staff; ``foreign`` for OUTSIDERS; the sign-in redirect,
    or 403 for the API, for anonymous).

    Writes (every method but GET): ``payload(objs)`` is valid for organization A's objects (form data
    for pages, JSON for the API). ``writers`` succeed with it (``success``: the status, by method or
    one for all); every other role is refused with ``refused[role]`` (or ``refused["role:METHOD"]``),
    by default what it reads (403/404) or 403 where it reads the page but may not write; nothing is
    written when refused.
    """

    kwargs: Callable[[dict], dict] = field(default=lambda objs: {})
    foreign: int | str = 404
    api: bool = False
    # Pages: what anonymous gets. Login redirect unless public (then ``expect["anonymous"]``).
    public: bool = False
    expect: dict[str, int | str] = field(default_factory=dict)
    # Methods the route serves when they cannot be read from the view (function views without
    # require_http_methods).
    methods: tuple[str, ...] | None = None
    payload: Callable[[dict], dict] | None = None
    writers: frozenset[str] = frozenset()
    success: int | str | dict[str, int] | None = None
    refused: dict[str, int | str] = field(default_factory=dict)
    # A write by a writer that answers without writing a row (a lookup, a preview).
    writes_rows: bool = True
    # A page's PUT: Django parses form bodies of POST requests only, so a writer's PUT always comes back
    # as the form with its errors (this status); others are refused before the form is read.
    page_put: int = 200
    # Outsiders who rightly see organization A's rows here (a specialist sees what is escalated to their team).
    shown_to: frozenset[str] = frozenset()

    def read_status(self, role: str) -> int | str:
        if role in self.expect:
            return self.expect[role]
        if role == "anonymous" and self.public:
            return 200
        if role == "anonymous":
            return 403 if self.api else LOGIN
        if role in OUTSIDERS:
            return self.foreign
        return 200

    def write_status(self, role: str, method: str) -> int | str:
        for key in (f"{role}:{method}", role):
            if key in self.refused:
                return self.refused[key]
        if role in self.writers:
            if not self.api and method == "PUT":
                return self.page_put
            if isinstance(self.success, dict):
                return self.success[method]
            if self.success is not None:
                return self.success
            if not self.api:
                return 302
            return {"POST": 201, "DELETE": 204}.get(method, 200)
        if role == "anonymous" and not self.public:
            return 403 if self.api else LOGIN
        read = self.read_status(role)
        return read if read in (403, 404, 401) else 403

    def succeeds(self, role: str, method: str) -> bool:
        """Whether this write by this role is expected to go through (and so to write rows)."""
        return (role in self.writers and self.writes_rows and f"{role}:{method}" not in self.refused
                and role not in self.refused and (self.api or method != "PUT"))

    def expected(self, role: str, method: str) -> int | str:
        return self.read_status(role) if method == "GET" else self.write_status(role, method)


R = frozenset
LEADS_A = R({"lead_a", "staff"})
PMS = R({"pm", "staff"})


def _resolved_view(route: str, kwargs: dict):
    from django.urls import resolve, reverse

    func = resolve(reverse(route, kwargs=kwargs)).func
    return getattr(func, "view_class", None) or func.cls


def _values(changes: dict, objs: dict) -> dict:
    return {k: v(objs) if callable(v) else v for k, v in changes.items()}


def form_data(route: str, key: str | None = None, form=None, **changes) -> Callable[[dict], dict]:
    """A payload builder: the page's form bound to ``objs[key]`` (or empty) as the browser posts it back,
    with ``changes``. ``route`` names the page (an edit page of ``objs[key]`` takes its pk)."""

    def build(objs: dict) -> dict:
        obj = objs[key] if key else None
        view = _resolved_view(route, {"pk": obj.pk} if obj is not None and "edit" in route else {})
        import inspect

        form_class = form or view.form_class
        takes_user = "user" in inspect.signature(form_class.__init__).parameters
        bound = form_class(instance=obj, **({"user": objs.world.staff} if takes_user else {}))
        data = {}
        for name in bound.fields:
            value = bound[name].value()
            if value is None or value is False:
                continue
            if isinstance(value, list | tuple):
                data[name] = [getattr(v, "pk", v) for v in value]
            else:
                data[name] = getattr(value, "pk", value)
        data.update(_values(changes, objs))
        return data

    return build


def api_data(detail_route: str, key: str, **changes) -> Callable[[dict], dict]:
    """A payload builder: ``objs[key]`` as the API reads it at ``detail_route`` (read-only fields are
    ignored on input), with ``changes``."""

    def build(objs: dict) -> dict:
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory

        obj = objs[key]
        viewset = _resolved_view(detail_route, {"pk": obj.pk})
        request = Request(APIRequestFactory().get("/"))
        data = dict(viewset.serializer_class(obj, context={"request": request}).data)
        data.update(_values(changes, objs))
        return data

    return build


def _static(data: dict) -> Callable[[dict], dict]:
    return lambda objs: {k: v(objs) if callable(v) else v for k, v in data.items()}


LIST = 200
_SPECIALIST = frozenset({"specialist"})
FORBIDDEN = 403
# GET expectations of pages only some roles use. "Add" pages name no organization: any lead SA may
# open them (for their own organizations), so lead_b gets the form too.
LEAD_WRITES = {"customer_a": FORBIDDEN, "pm": FORBIDDEN}
LEAD_ADDS = {**LEAD_WRITES, "lead_b": LIST}
PM_WRITES = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}

OBJECTS: dict[str, Callable] = {
    "organization": lambda w: w.org_a,
}

ROUTES: dict[str, Case] = {
    "home": Case(foreign=302, expect={"customer_a": 302, "lead_a": 302, "pm": 302, "staff": 302}),
    # Signed-in users are sent on to the home page.
    "login": Case(public=True, foreign=302, expect={r: 302 for r in ("customer_a", "lead_a", "pm", "staff")}),
    "logout": Case(public=True, foreign=405),
    # 503 only when the database or the broker is down; both run here.
    "healthz": Case(public=True, foreign=200),
    # A redirect to the static file for every method; nothing to write.
    "favicon": Case(public=True, foreign=302, expect={r: 302 for r in ROLES}, payload=lambda o: {},
                    refused={r: 302 for r in ROLES}),
    "portal:organization_list": Case(foreign=LIST),
    "portal:organization_detail": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    "portal:lead_home": Case(foreign=LIST, shown_to=_SPECIALIST),
    "portal:overview": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
    "api-root": Case(api=True, foreign=LIST),
    "api-schema": Case(api=True, foreign=LIST),
    "api-docs": Case(api=True, foreign=LIST),
    "api-token": Case(api=True, public=True, foreign=405),
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
    "workloads:reservation_list": Case(foreign=LIST),
    "workloads:reservation_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "workloads:reservation_edit": Case(kwargs=lambda o: {"pk": o["reservation"].pk}, expect=PM_WRITES),
    "workloads:changerequest_list": Case(foreign=LIST),
    "workloads:changerequest_add": Case(foreign=FORBIDDEN, expect=LEAD_ADDS),
    "workloads:changerequest_detail": Case(kwargs=lambda o: {"pk": o["change_request"].pk}),
    "workloads:changerequest_edit": Case(kwargs=lambda o: {"pk": o["change_request"].pk}, expect=LEAD_WRITES),
    "workloads:changerequest_decide": Case(kwargs=lambda o: {"pk": o["change_request"].pk}),
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
        api=True, kwargs=lambda o: {"pk": o["change_request"].pk}
    ),
}
ROUTES.update(_WL)


# --- review: the program overview, frozen weekly reviews (program managers only) --------------------
def _weekly_review(w):
    import datetime

    from portal.review import figures
    from portal.review.models import ActionItem, WeeklyReview

    review = WeeklyReview.objects.create(
        week_start=datetime.date(2026, 1, 5), figures=figures.overview(w.pm), notes="ZZ-ORG-A-SECRET notes", frozen_by=w.pm
    )
    ActionItem.objects.create(review=review, title="ZZ-ORG-A-SECRET follow up", owner=w.lead_a)
    return review


# One review per world (the action item's builder needs the same one; a second would repeat the week).
OBJECTS.update(weekly_review=lambda w: _memo(w, "weekly_review", _weekly_review),
               action_item=lambda w: _memo(w, "weekly_review", _weekly_review).action_items.get())
_PM_ONLY = {"foreign": FORBIDDEN, "expect": PM_WRITES}
_PM_POST = {"foreign": 405, "methods": ("POST",)}
_RV = {
    "review:overview_csv": Case(kwargs=lambda o: {"table": "organizations"}, **_PM_ONLY),
    "review:review_list": Case(**_PM_ONLY),
    "review:review_freeze": Case(**_PM_ONLY),
    "review:review_detail": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_print": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_pdf": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_csv": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk, "table": "organizations"}, **_PM_ONLY),
    "review:review_notes": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_POST),
    "review:actionitem_add": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_POST),
    "review:actionitem_done": Case(kwargs=lambda o: {"pk": o["action_item"].pk}, **_PM_POST),
    "review-api:api-root": Case(api=True, foreign=LIST),
    # Scoped: a lead SA gets the figures of the organizations they lead (lead_b: B's only); customers 403.
    "review-api:overview": Case(api=True, foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "review-api:weeklyreview-list": Case(api=True, foreign=LIST),
    "review-api:weeklyreview-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["weekly_review"].pk}, expect={"customer_a": 404, "lead_a": 404}
    ),
    "review:overview_xlsx": Case(**_PM_ONLY),
    "review:review_xlsx": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
}
ROUTES.update(_RV)
# Support interactions, lessons, enablement, the organization timeline page.
def _interaction(w):
    from tests.workloads.factories_interactions import InteractionFactory

    return InteractionFactory(organization=w.org_a, summary="ZZ-ORG-A-SECRET NCCL falls back to sockets",
                              visibility="shared", owner=w.lead_a)


def _enablement_session(w):
    from tests.workloads.factories_interactions import AttendanceFactory, EnablementSessionFactory

    session = EnablementSessionFactory(topic="ZZ-ORG-A-SECRET private onboarding", audience=[w.org_a])
    AttendanceFactory(session=session, organization=w.org_a, attendee="ZZ-ORG-A-SECRET engineer")
    return session


OBJECTS["interaction"] = _interaction
# An internal interaction of organization A: no customer ever reads INTERNAL_MARKER.
INTERNAL_MARKER = "ZZ-INTERNAL-ONLY"


def _internal_interaction(w):
    from tests.workloads.factories_interactions import InteractionFactory

    return InteractionFactory(organization=w.org_a, visibility="internal",
                              summary=f"{INTERNAL_MARKER} ZZ-ORG-A-SECRET retro")


OBJECTS["internal_interaction"] = _internal_interaction
OBJECTS["enablement_session"] = _enablement_session
_interaction_pk = lambda o: {"pk": o["interaction"].pk}  # noqa: E731
_session_pk = lambda o: {"pk": o["enablement_session"].pk}  # noqa: E731
ROUTES.update({
    "portal:timeline": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    # A specialist sees the interactions escalated to their team (organization A's one here).
    "interactions:interaction_list": Case(foreign=LIST, shown_to=_SPECIALIST),
    "interactions:interaction_add": Case(foreign=FORBIDDEN, expect={**LEAD_WRITES, "lead_b": LIST}),
    "interactions:interaction_suggest_tags": Case(  # GET answers 405 to everyone signed in
        foreign=405, expect={r: 405 for r in ROLES if r != "anonymous"}),
    "interactions:interaction_detail": Case(kwargs=_interaction_pk),
    "interactions:interaction_edit": Case(kwargs=_interaction_pk, expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}),
    "interactions:interaction_comment": Case(kwargs=_interaction_pk),
    "interactions:interaction_escalate": Case(kwargs=_interaction_pk),
    "interactions:interaction_sync": Case(kwargs=_interaction_pk),
    "interactions:interaction_quick_log": Case(
        kwargs=lambda o: {"slug": o["organization"].slug}, expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}
    ),
    # Lessons are shared across organizations with every lead SA; customers never search them.
    "interactions:lesson_search": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "interactions:enablement_list": Case(foreign=LIST),
    "interactions:enablement_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "interactions:enablement_detail": Case(kwargs=_session_pk),
    "interactions:enablement_edit": Case(kwargs=_session_pk, expect=PM_WRITES),
    "interactions:enablement_attendance": Case(kwargs=_session_pk),
    "interactions-api:api-root": Case(api=True, foreign=LIST),
    "interactions-api:interaction-list": Case(api=True, foreign=LIST, shown_to=_SPECIALIST),
    "interactions-api:interaction-detail": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-history": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-escalate": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:enablementsession-list": Case(api=True, foreign=LIST),
    "interactions-api:enablementsession-detail": Case(api=True, kwargs=_session_pk),
    "interactions-api:enablementattendance-list": Case(api=True, foreign=LIST),
    "interactions-api:enablementattendance-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["enablement_session"].attendances.first().pk}
    ),
    "interactions-api:challengetag-list": Case(api=True, foreign=LIST),
    "interactions-api:challengetag-detail": Case(api=True, foreign=LIST, kwargs=lambda o: {"slug": "slurm"}),
})
# --- health: cluster health, GPU faults, NCCL validation --------------------------------------------
def _health_report(w):
    from clusters.health import services
    from tests.health.factories_health import sample

    cluster = LAZY_CLUSTER(w)
    text = sample("dcgm_p5_xid79_missing_gpu.prom").replace("ip-10-1-45-13", "ip-ZZ-ORG-A-SECRET")
    return services.ingest(cluster, text, "push").report


def _gpu_fault(w):
    from clusters.health.models import GpuFault

    _health_report_cached(w)
    return GpuFault.objects.filter(cluster__organization=w.org_a).first()


def _validation_run(w):
    from tests.health.factories_health import validation_run

    return validation_run(LAZY_CLUSTER(w), notes="ZZ-ORG-A-SECRET first run")


def _memo(w, key, build):
    """One object per world, shared by the health builders (the world lives for one test)."""
    cache = w.__dict__.setdefault("_health_objects", {})
    if key not in cache:
        cache[key] = build(w)
    return cache[key]


def LAZY_CLUSTER(w):  # noqa: N802
    return _memo(w, "cluster", _cluster)


def _health_report_cached(w):
    return _memo(w, "report", _health_report)


OBJECTS.update(cluster=LAZY_CLUSTER, health_report=_health_report_cached, gpu_fault=_gpu_fault,
               validation_run=_validation_run,
               node_health=lambda w: _health_report_cached(w).nodes.order_by("-rank").first())
_CL = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
_HEALTH = {
    "health:program_health": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "health:cluster_health": Case(kwargs=_CL),
    "health:cluster_health_settings": Case(kwargs=_CL, expect=LEAD_WRITES),
    "health:rotate_token": Case(kwargs=_CL, expect=LEAD_WRITES),
    "health:validationrun_add": Case(kwargs=_CL, expect={"pm": FORBIDDEN}),
    "health:validationrun_detail": Case(kwargs=lambda o: {"pk": o["validation_run"].pk}),
    # POST-only (lead SAs of the fault's organization); GET is 405 for everyone.
    "health:gpufault_link": Case(kwargs=lambda o: {"pk": o["gpu_fault"].pk}),
    "health-api:api-root": Case(api=True, foreign=LIST),
    "health-api:healthreport-list": Case(api=True, foreign=LIST),
    "health-api:healthreport-detail": Case(api=True, kwargs=lambda o: {"pk": o["health_report"].pk}),
    "health-api:nodehealth-list": Case(api=True, foreign=LIST),
    "health-api:nodehealth-detail": Case(api=True, kwargs=lambda o: {"pk": o["node_health"].pk}),
    "health-api:gpufault-list": Case(api=True, foreign=LIST),
    "health-api:gpufault-detail": Case(api=True, kwargs=lambda o: {"pk": o["gpu_fault"].pk}),
    "health-api:validationrun-list": Case(api=True, foreign=LIST),
    "health-api:validationrun-detail": Case(api=True, kwargs=lambda o: {"pk": o["validation_run"].pk}),
    # Authenticated by a cluster token, not by a user: every user gets 401 on it.
    "health-api:ingest": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}, foreign=(401, 403)),
    "health-api:rotate-token": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}),
    # Amazon SNS posts here with no portal credential; only a signed SNS message is accepted (POST only):
    # any user's request is not one (403: no signature), and GET is not served.
    "health-api:alerts-sns": Case(api=True, public=True, expect={r: 405 for r in ROLES},
                                  payload=lambda o: {"Type": "Notification"}, refused={r: 403 for r in ROLES}),
}
ROUTES.update(_HEALTH)
# clusters: the launch pipeline. The one cluster of organization A every route uses.
def _cluster(w):
    from tests.clusters.factories_clusters import ready_cluster

    return ready_cluster(w.org_a, name="alpha-p5", error_message="ZZ-ORG-A-SECRET")


def _blueprint(w):
    from clusters import catalog

    return catalog.sync()["parallelcluster"]


def _launch_job(w):
    return LAZY_CLUSTER(w).jobs.first()


def _stack_event(w):
    from tests.clusters.factories_clusters import StackEventFactory

    return StackEventFactory(stack=LAZY_CLUSTER(w).stacks.first(), reason="ZZ-ORG-A-SECRET")


# One cluster of organization A per world (LAZY_CLUSTER memoizes _cluster) for health and launch routes.
OBJECTS.update({"cluster": LAZY_CLUSTER, "blueprint": _blueprint, "launch_job": _launch_job, "stack_event": _stack_event})
_cluster_pk = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
ROUTES.update({
    "clusters:cluster_list": Case(foreign=LIST),
    "clusters:launch_day": Case(foreign=LIST),
    "clusters:blueprint_list": Case(foreign=LIST),
    # The catalog is read by whoever holds a role in some organization; a specialist holds none.
    "clusters:blueprint_detail": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST,
                                      expect={"specialist": 404}),
    "clusters:launch": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=FORBIDDEN,
                            expect={**LEAD_ADDS, "specialist": 404}),
    "clusters:cluster_detail": Case(kwargs=_cluster_pk),
    "clusters:cluster_progress": Case(kwargs=_cluster_pk),
    "clusters:cluster_config": Case(kwargs=_cluster_pk),
    "clusters:cluster_retry": Case(kwargs=_cluster_pk),
    "clusters:cluster_delete": Case(kwargs=_cluster_pk, expect=LEAD_WRITES),
    "clusters-api:api-root": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-list": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-detail": Case(api=True, kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST,
                                          expect={"specialist": 404}),
    "clusters-api:cluster-list": Case(api=True, foreign=LIST),
    "clusters-api:cluster-detail": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-retry": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-pcluster-config": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:launchjob-list": Case(api=True, foreign=LIST),
    "clusters-api:launchjob-detail": Case(api=True, kwargs=lambda o: {"pk": o["launch_job"].pk}),
    "clusters-api:stackevent-list": Case(api=True, foreign=LIST),
    "clusters-api:stackevent-detail": Case(api=True, kwargs=lambda o: {"pk": o["stack_event"].pk}),
})
# health pushes (the push job): listed for users through the policy; the status route is for the cluster token only.
OBJECTS.update(health_push=lambda w: __import__("clusters.health.models", fromlist=["HealthPush"]).HealthPush.objects.create(
    cluster=_health_report_cached(w).cluster, status="failed", error="ZZ-ORG-A-SECRET reason"))
ROUTES.update({
    "health-api:healthpush-list": Case(api=True, foreign=LIST),
    "health-api:healthpush-detail": Case(api=True, kwargs=lambda o: {"pk": o["health_push"].pk}),
    "health-api:push-status": Case(api=True, kwargs=lambda o: {"cluster_id": o["health_push"].cluster_id,
                                                               "push_id": o["health_push"].pk}, foreign=401,
                                 # the cluster's token only: a signed-in user of any role is not it
                                 expect={r: 401 for r in ROLES}),
})
# --- engagement: escalations (internal: customers never see them; specialists only their team's) -------
def _escalation(w):
    from tests.engagement.factories_engagement import EscalationFactory

    return EscalationFactory(interaction=OBJECTS["interaction"](w), question="ZZ-ORG-A-SECRET why so slow")


OBJECTS["escalation"] = _escalation
_esc_pk = lambda o: {"pk": o["escalation"].pk}  # noqa: E731
_NO_CUSTOMER = {"customer_a": FORBIDDEN}
ROUTES.update({
    "engagement:escalation_list": Case(foreign=FORBIDDEN, expect={**_NO_CUSTOMER, "lead_b": LIST, "specialist": LIST},
                                       shown_to=_SPECIALIST),
    "engagement:escalation_detail": Case(kwargs=_esc_pk, expect={"customer_a": 404, "specialist": LIST},
                                         shown_to=_SPECIALIST),
    "engagement:escalation_transition": Case(
        kwargs=lambda o: {"pk": o["escalation"].pk, "transition": "accept"}, expect={"customer_a": 404}
    ),
    "engagement-api:api-root": Case(api=True, foreign=LIST),
    "engagement-api:escalationtarget-list": Case(api=True, foreign=LIST),
    "engagement-api:escalationtarget-detail": Case(
        api=True, kwargs=lambda o: {"slug": "frameworks"}, foreign=404, expect={"customer_a": 404, "lead_b": LIST}
    ),
    "engagement-api:escalation-list": Case(api=True, foreign=LIST, shown_to=_SPECIALIST),
    "engagement-api:escalation-detail": Case(api=True, kwargs=_esc_pk, expect={"customer_a": 404, "specialist": LIST},
                                             shown_to=_SPECIALIST),
    "engagement-api:escalation-transition": Case(api=True, kwargs=_esc_pk, expect={"customer_a": 404}),
})
# --- engagement: outcomes (customers record their own) ----------------------------------------------
def _milestone(w):
    import datetime

    from portal.engagement.models import Milestone

    return Milestone.objects.create(organization=w.org_a, kind="onboarded", reached_on=datetime.date(2026, 6, 1),
                                    note="ZZ-ORG-A-SECRET kickoff")


def _trained_model(w):
    from portal.engagement.models import TrainedModel

    return TrainedModel.objects.create(organization=w.org_a, name="alpha-100b", parameters_billions=100,
                                       instance_type="p5.48xlarge", instance_count=16, notes="ZZ-ORG-A-SECRET run")


OBJECTS.update(milestone=_milestone, trained_model=_trained_model)
_PM_READS = {"pm": FORBIDDEN}
ROUTES.update({
    "engagement:outcome_list": Case(foreign=LIST),
    "engagement:outcomes": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    "engagement:trainedmodel_add": Case(kwargs=lambda o: {"org": o["organization"].slug}, expect=_PM_READS),
    "engagement:trainedmodel_edit": Case(kwargs=lambda o: {"pk": o["trained_model"].pk}, expect=_PM_READS),
    "engagement-api:milestone-list": Case(api=True, foreign=LIST),
    "engagement-api:milestone-detail": Case(api=True, kwargs=lambda o: {"pk": o["milestone"].pk}),
    "engagement-api:trainedmodel-list": Case(api=True, foreign=LIST),
    "engagement-api:trainedmodel-detail": Case(api=True, kwargs=lambda o: {"pk": o["trained_model"].pk}),
})
# --- engagement: program cycles -------------------------------------------------------------------------
def _cycle(w):
    from portal.engagement.models import Cycle, CycleParticipation

    Cycle.objects.filter(status="active").update(status="archived")
    # The active cycle is named to everyone (lists offer it as their filter): its name is not secret.
    cycle = Cycle.objects.create(number=90, name="Cycle 90", status="active",
                                 lessons_carried="ZZ-ORG-A-SECRET lesson")
    CycleParticipation.objects.create(cycle=cycle, organization=w.org_a)
    return cycle


OBJECTS["cycle"] = _cycle
_cycle_pk = lambda o: {"pk": o["cycle"].pk}  # noqa: E731
_PM_EXPORT = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}
ROUTES.update({
    "engagement:cycle_list": Case(foreign=LIST),
    "engagement:cycle_detail": Case(kwargs=_cycle_pk),
    "engagement:cycle_report_pdf": Case(kwargs=_cycle_pk, expect=_PM_EXPORT),
    "engagement:cycle_report_csv": Case(kwargs=_cycle_pk, expect=_PM_EXPORT),
    "engagement:cycle_start_next": Case(kwargs=lambda o: (o["cycle"], {})[1], foreign=FORBIDDEN,
                                        expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
})
ROUTES.update({
    "engagement-api:cycle-list": Case(api=True, foreign=LIST),
    "engagement-api:cycle-detail": Case(api=True, kwargs=_cycle_pk),
    "engagement-api:cycle-report": Case(api=True, kwargs=_cycle_pk, expect=_PM_EXPORT),
    "engagement-api:cycle-start-next": Case(api=True, foreign=FORBIDDEN),
})
# --- engagement: the Slack bridge (Slack calls these; every request is verified by its signature) --------
ROUTES.update({
    "engagement:slack_interactivity": Case(public=True, foreign=405, methods=("POST",)),
    "engagement:slack_command": Case(public=True, foreign=405, methods=("POST",)),
})
# API token revocation (POST only; the token that makes the request is revoked).
ROUTES["api-token-revoke"] = Case(api=True, foreign=405, expect={r: 405 for r in ("customer_a", "lead_a", "pm", "staff")})
# The cycle first: its builder archives the active cycle, and rows of an archived cycle are read-only, so
# every other object must be made in the cycle it starts.
OBJECTS = {"cycle": OBJECTS.pop("cycle"), **OBJECTS}


# --- writes: a payload valid for organization A's objects, and who may send it ----------------------------
def _writes(name: str, payload: Callable[[dict], dict], writers, **more) -> None:
    from dataclasses import replace

    ROUTES[name] = replace(ROUTES[name], payload=payload, writers=frozenset(writers), **more)


def _pk(key: str) -> Callable[[dict], int]:
    return lambda objs: objs[key].pk


STAFF = {"staff"}
LEAD = {"lead_a", "staff"}
PM = {"pm", "staff"}
# Creating through the API: an organization the caller cannot see is not among the field's choices (400).
_UNSEEN_ORG = {"customer_b": 400, "lead_b": 400, "specialist": 400}

# portal
_writes("portal-api:organization-list", api_data("portal-api:organization-detail", "organization",
                                                 name="Gamma Co", slug="gamma-co", aws_account_id="999900001111"),
        STAFF)
# Organizations are written by staff alone: everyone else is refused before the lookup (403). Deleting
# organization A is refused while its rows exist (409): its memberships, workloads, clusters protect it.
_writes("portal-api:organization-detail", api_data("portal-api:organization-detail", "organization",
                                                   description="changed"), STAFF,
        refused={**{r: 403 for r in OUTSIDERS}, "staff:DELETE": 409})
# Signing in: anonymous with the right password; a signed-in user is sent on without signing in again.
_writes("login", _static({"username": "customer_a", "password": "pw-for-tests"}), {"anonymous"}, success=302,
        refused={**{r: 302 for r in ROLES if r != "anonymous"}, "anonymous:PUT": 200})
_writes("logout", _static({}), ROLES, success=LOGIN, writes_rows=False)
_writes("api-token", _static({"username": "customer_a", "password": "pw-for-tests"}), ROLES, success=200)
# Revokes the token the request is made with: a session has none to revoke (400, nothing written).
_writes("api-token-revoke", _static({}), (), refused={r: 400 for r in ROLES if r != "anonymous"})

# workloads
_writes("workloads-api:workload-list", api_data("workloads-api:workload-detail", "workload", name="Beta 7B"),
        LEAD, refused=_UNSEEN_ORG)
_writes("workloads-api:workload-detail", api_data("workloads-api:workload-detail", "workload", name="Alpha 101B"),
        LEAD)
_writes("workloads-api:instancequota-list", api_data("workloads-api:instancequota-detail", "quota",
                                                     instance_type="trn1.32xlarge"), PM, refused=_UNSEEN_ORG)
_writes("workloads-api:instancequota-detail", api_data("workloads-api:instancequota-detail", "quota",
                                                       notes="changed"), PM)
_writes("workloads-api:capacityreservation-list", api_data("workloads-api:capacityreservation-detail",
                                                           "reservation", reservation_id="cr-11111111111111111"),
        PM, refused=_UNSEEN_ORG)
_writes("workloads-api:capacityreservation-detail", api_data("workloads-api:capacityreservation-detail",
                                                             "reservation", notes="changed"), PM)
_writes("workloads-api:quotachangerequest-list", api_data("workloads-api:quotachangerequest-detail",
                                                          "change_request"), LEAD, refused=_UNSEEN_ORG)
_writes("workloads-api:quotachangerequest-detail", api_data("workloads-api:quotachangerequest-detail",
                                                            "change_request", justification="more"), LEAD)
_writes("workloads-api:quotachangerequest-decide", _static({"decision": "approve", "comment": "ok"}), PM,
        success=200)
# Pages that create: organization A is not among an outsider's choices, so the form comes back (200).
_writes("workloads:workload_add", form_data("workloads:workload_add", "workload", name="Beta 7B",
                                            organization=_pk("organization")), LEAD, refused={"lead_b": 200})
_writes("workloads:workload_edit", form_data("workloads:workload_edit", "workload", name="Alpha 101B"), LEAD)
_writes("workloads:workload_section", form_data("workloads:workload_edit", "workload", name="Alpha 102B"), LEAD,
        success=303)
_writes("workloads:quota_add", form_data("workloads:quota_add", "quota", instance_type="trn1.32xlarge"), PM)
_writes("workloads:quota_edit", form_data("workloads:quota_edit", "quota", notes="changed"), PM)
_writes("workloads:reservation_add", form_data("workloads:reservation_add", "reservation",
                                               reservation_id="cr-11111111111111111"), PM)
_writes("workloads:reservation_edit", form_data("workloads:reservation_edit", "reservation", notes="changed"), PM)
_writes("workloads:changerequest_add", form_data("workloads:changerequest_add", "change_request",
                                                 organization=_pk("organization")), LEAD, refused={"lead_b": 200})
_writes("workloads:changerequest_edit", form_data("workloads:changerequest_edit", "change_request",
                                                  justification="more"), LEAD)
_writes("workloads:changerequest_decide", _static({"decision": "approve", "comment": "ok"}), PM)

# interactions and enablement
_writes("interactions-api:interaction-list", api_data("interactions-api:interaction-detail", "interaction",
                                                      summary="A second question"), LEAD, refused=_UNSEEN_ORG)
_writes("interactions-api:interaction-detail", api_data("interactions-api:interaction-detail", "interaction",
                                                        summary="Changed"), LEAD)
# POST adds a comment; customers comment on what is shared with them.
_writes("interactions-api:interaction-history", _static({"body": "A comment"}), {"customer_a", "lead_a", "staff"})
_writes("interactions-api:interaction-escalate", _static({"target": "frameworks", "reason": "Why so slow?"}),
        LEAD, success=200)
_writes("interactions-api:enablementattendance-list", lambda o: {
    "session": o["enablement_session"].pk, "organization": o["organization"].pk, "attendee": "Second engineer",
    "satisfaction": 5}, {"lead_a", "pm", "staff"}, refused=_UNSEEN_ORG)
_writes("interactions:interaction_add", form_data("interactions:interaction_edit", "interaction",
                                                  summary="A second question", organization=_pk("organization")),
        LEAD, refused={"lead_b": 400}, page_put=400)
_writes("interactions:interaction_edit", form_data("interactions:interaction_edit", "interaction",
                                                   summary="Changed"), LEAD, page_put=400)
_writes("interactions:interaction_quick_log", _static({"kind": "support_case", "summary": "Quick one", "severity": "normal",
                                                       "visibility": "shared", "body": "text"}), LEAD)
_writes("interactions:interaction_comment", _static({"body": "A comment"}), {"customer_a", "lead_a", "staff"})
_writes("interactions:interaction_escalate", _static({"target": "frameworks", "reason": "Why so slow?"}), LEAD)
# Without a Slack channel linked to organization A there is nothing to sync: the lead SA is sent back.
_writes("interactions:interaction_sync", _static({}), LEAD, writes_rows=False)
_writes("interactions:interaction_suggest_tags", _static({"summary": "NCCL falls back to sockets", "body": "EFA"}),
        {"lead_a", "lead_b", "pm", "staff"}, success=200, writes_rows=False)
_writes("interactions:enablement_add", form_data("interactions:enablement_edit", "enablement_session",
                                                 topic="Second session"), PM, page_put=400)
_writes("interactions:enablement_edit", form_data("interactions:enablement_edit", "enablement_session",
                                                  topic="Changed"), PM, page_put=400)
_writes("interactions:enablement_attendance", lambda o: {"organization": o["organization"].pk,
                                                         "attendee": "Second engineer", "satisfaction": 5},
        {"lead_a", "pm", "staff"})

# review
_writes("review:review_freeze", _static({"notes": "Frozen", "confirm": "1"}), PM)
_writes("review:review_notes", _static({"notes": "Changed"}), PM)
_writes("review:actionitem_add", lambda o: {"title": "Follow up", "owner": o.world.lead_a.pk, "due": "2026-12-31"},
        PM)
_writes("review:actionitem_done", _static({"done": "1"}), PM)

# health
_writes("health:cluster_health_settings", _static({"pull_enabled": "", "auth_kind": "none", "aws_region": ""}), LEAD)
_writes("health:rotate_token", _static({}), LEAD)
_writes("health:validationrun_add", lambda o: {"text": _nccl_text(), "nodes": 2}, {"customer_a", "lead_a", "staff"})
_writes("health:gpufault_link", lambda o: {"interaction": o["interaction"].pk}, LEAD)
_writes("health-api:gpufault-detail", api_data("health-api:gpufault-detail", "gpu_fault"), LEAD, success=200)
# Program managers read runs but do not upload them: the cluster is not among their choices (400).
_writes("health-api:validationrun-list", lambda o: {"cluster": o["cluster"].pk, "text": _nccl_text(), "nodes": 2},
        {"customer_a", "lead_a", "staff"}, refused={**_UNSEEN_ORG, "pm": 400})
_writes("health-api:validationrun-detail", api_data("health-api:validationrun-detail", "validation_run",
                                                    notes="changed"), {"customer_a", "lead_a", "staff"})
# Cluster-token endpoints: no user holds the right.
_writes("health-api:ingest", _static({}), (), refused={r: 401 for r in ROLES})
_writes("health-api:rotate-token", _static({}), LEAD, success=201)

# clusters
_writes("clusters:cluster_delete", lambda o: {"confirm_name": o["cluster"].name}, LEAD)
_writes("clusters:cluster_retry", _static({}), LEAD, kwargs=lambda o: {"pk": o["failed_cluster"].pk})
# The preview: the whole form, checked and shown back; nothing is launched.
_writes("clusters:launch", lambda o: {**_launch_form(o), "preview": "1"}, {"lead_a", "staff"}, success=200,
        writes_rows=False, refused={"lead_b": 400})
_writes("clusters-api:cluster-list", lambda o: _launch_api(o), LEAD, refused={r: 403 for r in OUTSIDERS},
        success=202)
_writes("clusters-api:cluster-detail", lambda o: {"confirm": o["cluster"].name}, LEAD, success=202)
_writes("clusters-api:cluster-retry", _static({}), LEAD, kwargs=lambda o: {"pk": o["failed_cluster"].pk},
        success=202)

# engagement
# Accepting is the team's: the lead SA who escalated sees it but may not accept it.
_writes("engagement:escalation_transition", _static({"answer": "Use EFA"}), {"staff", "specialist"},
        refused={"lead_a": 403})
_writes("engagement-api:escalation-list", lambda o: {"interaction": o["interaction"].pk, "target": "frameworks",
                                                     "question": "Another question"}, LEAD,
        refused={**_UNSEEN_ORG, "customer_a": 400})  # no escalation target is among a customer's choices
_writes("engagement-api:escalation-detail", api_data("engagement-api:escalation-detail", "escalation",
                                                     question="Changed"), {"lead_a", "staff", "specialist"})
_writes("engagement-api:escalation-transition", _static({"transition": "accept", "answer": ""}),
        {"staff", "specialist"}, success=200, refused={"lead_a": 403})
_writes("engagement:outcomes", _static({"onboarded": "2026-06-02"}), {"customer_a", "lead_a", "staff"})
_writes("engagement:trainedmodel_add", form_data("engagement:trainedmodel_edit", "trained_model", name="beta-7b"),
        {"customer_a", "lead_a", "staff"}, page_put=400)
_writes("engagement:trainedmodel_edit", form_data("engagement:trainedmodel_edit", "trained_model", notes="changed"),
        {"customer_a", "lead_a", "staff"}, page_put=400)
_writes("engagement-api:milestone-list", api_data("engagement-api:milestone-detail", "milestone", kind="model_trained"),
        {"customer_a", "lead_a", "staff"}, refused=_UNSEEN_ORG)
_writes("engagement-api:milestone-detail", api_data("engagement-api:milestone-detail", "milestone",
                                                    note="changed"), {"customer_a", "lead_a", "staff"})
_writes("engagement-api:trainedmodel-list", api_data("engagement-api:trainedmodel-detail", "trained_model",
                                                     name="beta-7b"), {"customer_a", "lead_a", "staff"},
        refused=_UNSEEN_ORG)
_writes("engagement-api:trainedmodel-detail", api_data("engagement-api:trainedmodel-detail", "trained_model",
                                                       notes="changed"), {"customer_a", "lead_a", "staff"})
_writes("engagement:cycle_start_next", lambda o: {"name": "Cycle 91", "continuing": [o["organization"].pk],
                                                 "confirm": "yes"}, PM)
_writes("engagement-api:cycle-start-next", lambda o: {"name": "Cycle 91", "continuing": [o["organization"].slug],
                                                      "confirm": True},
        PM, success=201)
# Slack calls these, signed with the app's secret: no user holds the right.
_writes("engagement:slack_interactivity", _static({"payload": "{}"}), ())
_writes("engagement:slack_command", _static({"command": "/portal", "text": "help"}), ())


def _nccl_text() -> str:
    from tests.health.factories_health import sample

    return sample("nccl_allreduce_2xp5_efa_srun.txt")


def _failed_cluster(w):
    from tests.clusters.factories_clusters import launched_cluster

    return launched_cluster(w.org_a, name="alpha-retry", state="failed", error_message="ZZ-ORG-A-SECRET failed")


OBJECTS["failed_cluster"] = _failed_cluster
_LAUNCH = {"network": {"AvailabilityZone": "ap-northeast-1a"},
           "storage": {"LustreStorageCapacity": "2400", "LustreThroughputPerTiB": "250",
                       "CreateHomeFileSystem": "true", "HomeStorageCapacity": "512", "HomeThroughputCapacity": "64"},
           "cluster": {"ComputeInstanceType": "p5.48xlarge", "ComputeMinCount": "0", "ComputeMaxCount": "2",
                       "CapacityType": "ONDEMAND", "Os": "alinux2023", "HeadNodeInstanceType": "m5.8xlarge",
                       "QueueName": "compute"}}


def _launch_form(objs) -> dict:
    """The launch form for a two-node cluster of organization A, as the browser posts it."""
    fields = {f"{role}__{name}": value for role, values in _LAUNCH.items() for name, value in values.items()}
    return {"organization": objs["organization"].pk, "name": "beta-p5", "region": "ap-northeast-1",
            "full_stack": "on", **fields}


def _launch_api(objs) -> dict:
    return {"organization": objs["organization"].slug, "name": "beta-p5", "blueprint": "parallelcluster",
            "region": "ap-northeast-1", "full_stack": True, "parameters": _LAUNCH}


# --- remediation: proposals on a cluster's nodes, the customer's consent, the organization's policy -------------
_FAULTY_HOST = "ip-ZZ-ORG-A-SECRET"


def _remediation_action(w):
    from clusters.remediation.models import RemediationAction, RemediationNode

    cluster = LAZY_CLUSTER(w)
    _health_report_cached(w)
    action = RemediationAction.objects.create(organization=w.org_a, cluster=cluster, kind="reboot",
                                              nodes=[_FAULTY_HOST], key="access-case", reason="ZZ-ORG-A-SECRET why")
    RemediationNode.objects.create(action=action, cluster=cluster, hostname=_FAULTY_HOST)
    return action


OBJECTS["remediation_action"] = lambda w: _memo(w, "remediation_action", _remediation_action)
_ACT = lambda o: {"pk": o["remediation_action"].pk}  # noqa: E731
ROUTES.update({
    "remediation:cluster_panel": Case(kwargs=_CL),
    "remediation:action_propose": Case(kwargs=_CL),
    "remediation:action_detail": Case(kwargs=_ACT),
    "remediation:action_approve": Case(kwargs=_ACT),
    "remediation:action_decline": Case(kwargs=_ACT),
    "remediation:action_cancel": Case(kwargs=_ACT),
    "remediation:policy_edit": Case(kwargs=lambda o: {"org_pk": o["organization"].pk}),
    "remediation-api:remediationaction-list": Case(api=True, foreign=LIST),
    "remediation-api:remediationaction-detail": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-approve": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-decline": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-cancel": Case(api=True, kwargs=_ACT),
})
_CONSENT = {"customer_a", "staff"}
_writes("remediation:action_propose", _static({"nodes": [_FAULTY_HOST], "kind": "drain"}), LEAD)
_writes("remediation:action_approve", _static({}), _CONSENT, kwargs=_ACT)
_writes("remediation:action_decline", _static({"why": "not now"}), _CONSENT, kwargs=_ACT)
_writes("remediation:action_cancel", _static({}), LEAD, kwargs=_ACT)
_writes("remediation:policy_edit", _static({"mode": "lead_sa", "max_nodes": 1, "cooldown_hours": 24}), LEAD)
_writes("remediation-api:remediationaction-list",
        lambda o: {"cluster": o["cluster"].pk, "nodes": [_FAULTY_HOST], "kind": "drain"}, LEAD, success=201,
        refused=_UNSEEN_ORG)
_writes("remediation-api:remediationaction-approve", _static({}), _CONSENT, success=200)
_writes("remediation-api:remediationaction-decline", _static({"why": "not now"}), _CONSENT, success=200)
_writes("remediation-api:remediationaction-cancel", _static({}), LEAD, success=200)


# --- validation routes ---
# NCCL validation started from the portal: the cluster's panel and start form, a job's page, the API (start, list,
# detail), the bandwidth trend, and the route a running job posts its outputs to with its own token.
def _validation_job(w):
    from clusters.health.models import ValidationJob

    return ValidationJob.objects.create(cluster=LAZY_CLUSTER(w), key="access-case", expected=["all_reduce"],
                                        collectives=["all_reduce"], upload_base="http://portal.invalid",
                                        state="done", verdict="pass", summary="ZZ-ORG-A-SECRET summary")


OBJECTS["validation_job"] = lambda w: _memo(w, "validation_job", _validation_job)
_VJ = lambda o: {"pk": o["validation_job"].pk}  # noqa: E731
ROUTES.update({
    "health:validationjob_panel": Case(kwargs=_CL),
    "health:validationjob_add": Case(kwargs=_CL),
    "health:validationjob_detail": Case(kwargs=_VJ),
    "health-api:validationjob-list": Case(api=True, foreign=LIST),
    "health-api:validationjob-detail": Case(api=True, kwargs=_VJ),
    "health-api:validation-trend": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}),
    # Authenticated by the job's own upload token, not by a user: every user gets 401 on it.
    "health-api:validation-output": Case(api=True, kwargs=_VJ, foreign=401, expect={r: 401 for r in ROLES}),
})
_STARTERS = {"customer_a", "lead_a", "staff"}
_writes("health:validationjob_add", _static({"collectives": ["all_reduce"]}), _STARTERS)
_writes("health-api:validationjob-list", lambda o: {"cluster": o["cluster"].pk, "collectives": ["all_reduce"]},
        _STARTERS, success=201, refused={**_UNSEEN_ORG, "pm": 400})
_writes("health-api:validation-output", _static({}), (), refused={r: 401 for r in ROLES})
# --- remediation routes ---
# Opening an AWS Support case from an escalated action: lead SAs and staff; the access case's action was not
# escalated, so a writer is sent back to the action with the reason and nothing is written.
ROUTES["remediation:action_support_case"] = Case(kwargs=_ACT)
_writes("remediation:action_support_case", _static({}), LEAD, success=302, writes_rows=False)
# --- i18nweb routes ---
# The language switcher: anyone may choose a language (signed in, it is remembered for them); GET is not served.
ROUTES["set_language"] = Case(public=True, foreign=405, expect={r: 405 for r in ROLES})
_writes("set_language", _static({"language": "ja", "next": "/"}), ROLES, success=302, writes_rows=False)
# --- cycle routes ---
def _scheduled_cycle(w):
    """The next cycle, scheduled to start in a week (the active one is organization A's cycle)."""
    import datetime

    from django.utils import timezone

    from portal.engagement.models import Cycle, CycleParticipation

    if not Cycle.objects.filter(number=90, status="active").exists():
        OBJECTS["cycle"](w)
    # Numbered past the next (91), so that starting the next cycle is not refused as already scheduled.
    nxt = Cycle.objects.create(number=95, name="Cycle 95", status="planned",
                               starts_on=timezone.localdate() + datetime.timedelta(days=7))
    CycleParticipation.objects.create(cycle=nxt, organization=w.org_a)
    return nxt


OBJECTS["scheduled_cycle"] = lambda w: _memo(w, "scheduled_cycle", _scheduled_cycle)
ROUTES["engagement:cycle_schedule"] = Case(kwargs=lambda o: {"pk": o["scheduled_cycle"].pk}, foreign=FORBIDDEN,
                                           expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN})


def _move_start(o):
    import datetime

    from django.utils import timezone

    return {"action": "move", "confirm": "yes",
            "starts_on": (timezone.localdate() + datetime.timedelta(days=9)).isoformat()}


_writes("engagement:cycle_schedule", _move_start, PM)
# --- accounting routes ---
def _reservation_check(w):
    from django.utils import timezone

    from clusters.accounting.models import ReservationCheck

    reservation = _memo(w, "reservation", _reservation)
    return ReservationCheck.objects.create(reservation=reservation, organization=w.org_a, checked_at=timezone.now(),
                                           status="ok", aws_total=8, aws_in_use=0, portal_held=8, flagged=True)


def _accounting_settings(w):
    from clusters.accounting.models import AccountingSettings

    return AccountingSettings.objects.create(organization=w.org_a, idle_busy_percent=15)


OBJECTS["reservation_check"] = lambda w: _memo(w, "reservation_check", _reservation_check)
OBJECTS["accounting_settings"] = lambda w: _memo(w, "accounting_settings", _accounting_settings)
ROUTES.update({
    "accounting:settings": Case(kwargs=lambda o: {"slug": o["organization"].slug},
                                expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}),
    "accounting-api:api-root": Case(api=True, foreign=LIST),
    "accounting-api:reservationcheck-list": Case(api=True, foreign=LIST),
    "accounting-api:reservationcheck-detail": Case(api=True, kwargs=lambda o: {"pk": o["reservation_check"].pk}),
    "accounting-api:accountingsettings-list": Case(api=True, foreign=LIST),
    "accounting-api:accountingsettings-detail": Case(api=True,
                                                     kwargs=lambda o: {"pk": o["accounting_settings"].pk},
                                                     expect={"customer_a": 404}),
})
_writes("accounting:settings", _static({"idle_busy_percent": 20, "idle_hours": 12, "stall_minutes": 30}), LEAD)
