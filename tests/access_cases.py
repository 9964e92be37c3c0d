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
    success: int | dict[str, int] | None = None
    refused: dict[str, int | str] = field(default_factory=dict)
    # A write by a writer that answers without writing a row (a lookup, a preview).
    writes_rows: bool = True
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

    def expected(self, role: str, method: str) -> int | str:
        return self.read_status(role) if method == "GET" else self.write_status(role, method)


R = frozenset
LEADS_A = R({"lead_a", "staff"})
PMS = R({"pm", "staff"})


def form_data(form_path: str, key: str | None = None, **changes) -> Callable[[dict], dict]:
    """A payload builder: the form bound to ``objs[key]`` as the page would post it back, with ``changes``."""

    def build(objs: dict) -> dict:
        from django.utils.module_loading import import_string

        form = import_string(form_path)(instance=objs[key] if key else None)
        data = {}
        for name, bound in form.fields.items():
            value = form[name].value()
            if value is None or value is False:
                continue
            if isinstance(value, list | tuple):
                data[name] = [getattr(v, "pk", v) for v in value]
            else:
                data[name] = getattr(value, "pk", value)
        data.update({k: v(objs) if callable(v) else v for k, v in changes.items()})
        return data

    return build


def api_data(serializer_path: str, key: str, **changes) -> Callable[[dict], dict]:
    """A payload builder: ``objs[key]`` as the API reads it (read-only fields are ignored on input)."""

    def build(objs: dict) -> dict:
        from django.utils.module_loading import import_string
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory

        request = Request(APIRequestFactory().get("/"))
        data = dict(import_string(serializer_path)(objs[key], context={"request": request}).data)
        data.update({k: v(objs) if callable(v) else v for k, v in changes.items()})
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
    "workloads:reservation_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "workloads:reservation_edit": Case(kwargs=lambda o: {"pk": o["reservation"].pk}, expect=PM_WRITES),
    "workloads:changerequest_list": Case(foreign=LIST),
    "workloads:changerequest_add": Case(foreign=FORBIDDEN, expect=LEAD_ADDS),
    "workloads:changerequest_detail": Case(kwargs=lambda o: {"pk": o["change_request"].pk}),
    "workloads:changerequest_edit": Case(kwargs=lambda o: {"pk": o["change_request"].pk}, expect=LEAD_WRITES),
    "workloads:changerequest_decide": Case(kwargs=lambda o: {"pk": o["change_request"].pk}, foreign=405),
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
    "review:review_freeze": Case(**_PM_POST),
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
OBJECTS["enablement_session"] = _enablement_session
_interaction_pk = lambda o: {"pk": o["interaction"].pk}  # noqa: E731
_session_pk = lambda o: {"pk": o["enablement_session"].pk}  # noqa: E731
_ALL_405 = {"customer_a": 405, "lead_a": 405, "pm": 405, "staff": 405}  # POST-only routes
ROUTES.update({
    "portal:timeline": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    # A specialist sees the interactions escalated to their team (organization A's one here).
    "interactions:interaction_list": Case(foreign=LIST, shown_to=_SPECIALIST),
    "interactions:interaction_add": Case(foreign=FORBIDDEN, expect={**LEAD_WRITES, "lead_b": LIST}),
    "interactions:interaction_suggest_tags": Case(foreign=405, expect=_ALL_405),
    "interactions:interaction_detail": Case(kwargs=_interaction_pk),
    "interactions:interaction_edit": Case(kwargs=_interaction_pk, expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}),
    "interactions:interaction_comment": Case(kwargs=_interaction_pk, expect=_ALL_405),
    "interactions:interaction_escalate": Case(kwargs=_interaction_pk, expect=_ALL_405),
    "interactions:interaction_sync": Case(kwargs=_interaction_pk, expect=_ALL_405),
    "interactions:interaction_quick_log": Case(
        kwargs=lambda o: {"slug": o["organization"].slug}, expect={"customer_a": FORBIDDEN, "pm": FORBIDDEN}
    ),
    # Lessons are shared across organizations with every lead SA; customers never search them.
    "interactions:lesson_search": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "interactions:enablement_list": Case(foreign=LIST),
    "interactions:enablement_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "interactions:enablement_detail": Case(kwargs=_session_pk),
    "interactions:enablement_edit": Case(kwargs=_session_pk, expect=PM_WRITES),
    "interactions:enablement_attendance": Case(kwargs=_session_pk, foreign=405, expect=_ALL_405),
    "interactions-api:api-root": Case(api=True, foreign=LIST),
    "interactions-api:interaction-list": Case(api=True, foreign=LIST, shown_to=_SPECIALIST),
    "interactions-api:interaction-detail": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-history": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-escalate": Case(api=True, kwargs=_interaction_pk, foreign=405, expect=_ALL_405),
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
    "health:gpufault_link": Case(kwargs=lambda o: {"pk": o["gpu_fault"].pk}, foreign=405, expect=_ALL_405),
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
    "health-api:rotate-token": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}, foreign=(404, 405)),
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
    "clusters:cluster_retry": Case(kwargs=_cluster_pk, foreign=405, methods=("POST",)),
    "clusters:cluster_delete": Case(kwargs=_cluster_pk, expect=LEAD_WRITES),
    "clusters-api:api-root": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-list": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-detail": Case(api=True, kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST,
                                          expect={"specialist": 404}),
    "clusters-api:cluster-list": Case(api=True, foreign=LIST),
    "clusters-api:cluster-detail": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-retry": Case(api=True, kwargs=_cluster_pk, foreign=405),
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
        kwargs=lambda o: {"pk": o["escalation"].pk, "transition": "accept"}, foreign=405, expect=_ALL_405
    ),
    "engagement-api:api-root": Case(api=True, foreign=LIST),
    "engagement-api:escalationtarget-list": Case(api=True, foreign=LIST),
    "engagement-api:escalationtarget-detail": Case(
        api=True, kwargs=lambda o: {"slug": "frameworks"}, foreign=404, expect={"customer_a": 404, "lead_b": LIST}
    ),
    "engagement-api:escalation-list": Case(api=True, foreign=LIST, shown_to=_SPECIALIST),
    "engagement-api:escalation-detail": Case(api=True, kwargs=_esc_pk, expect={"customer_a": 404, "specialist": LIST},
                                             shown_to=_SPECIALIST),
    "engagement-api:escalation-transition": Case(api=True, kwargs=_esc_pk, foreign=405, expect=_ALL_405),
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
    cycle = Cycle.objects.create(number=90, name="Cycle ZZ-ORG-A-SECRET", status="active",
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
    "engagement-api:cycle-start-next": Case(api=True, foreign=405, expect=_ALL_405),
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
