"""Route cases of workloads: workload records, quotas and capacity, interactions and enablement."""
from __future__ import annotations

from tests.routecases import (
    _SPECIALIST,
    _UNSEEN_ORG,
    FORBIDDEN,
    LEAD,
    LEAD_ADDS,
    LEAD_WRITES,
    LIST,
    OBJECTS,
    PM,
    PM_WRITES,
    ROLES,
    ROUTES,
    Case,
    _pk,
    _static,
    _writes,
    api_data,
    form_data,
)


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


# --- interactions: support interactions, lessons, enablement ---------------------------------------
def _interaction(w):
    from tests.interactions.factories_interactions import InteractionFactory

    return InteractionFactory(organization=w.org_a, summary="ZZ-ORG-A-SECRET NCCL falls back to sockets",
                              visibility="shared", owner=w.lead_a)


def _enablement_session(w):
    from tests.interactions.factories_interactions import AttendanceFactory, EnablementSessionFactory

    session = EnablementSessionFactory(topic="ZZ-ORG-A-SECRET private onboarding", audience=[w.org_a])
    AttendanceFactory(session=session, organization=w.org_a, attendee="ZZ-ORG-A-SECRET engineer")
    return session


OBJECTS["interaction"] = _interaction
# An internal interaction of organization A: no customer ever reads INTERNAL_MARKER.
INTERNAL_MARKER = "ZZ-INTERNAL-ONLY"


def _internal_interaction(w):
    from tests.interactions.factories_interactions import InteractionFactory

    return InteractionFactory(organization=w.org_a, visibility="internal",
                              summary=f"{INTERNAL_MARKER} ZZ-ORG-A-SECRET retro")


OBJECTS["internal_interaction"] = _internal_interaction
OBJECTS["enablement_session"] = _enablement_session
_interaction_pk = lambda o: {"pk": o["interaction"].pk}  # noqa: E731
_session_pk = lambda o: {"pk": o["enablement_session"].pk}  # noqa: E731
ROUTES.update({
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
    "enablement:enablement_list": Case(foreign=LIST),
    "enablement:enablement_add": Case(foreign=FORBIDDEN, expect=PM_WRITES),
    "enablement:enablement_detail": Case(kwargs=_session_pk),
    "enablement:enablement_edit": Case(kwargs=_session_pk, expect=PM_WRITES),
    "enablement:enablement_attendance": Case(kwargs=_session_pk),
    "interactions-api:api-root": Case(api=True, foreign=LIST),
    "interactions-api:interaction-list": Case(api=True, foreign=LIST, shown_to=_SPECIALIST),
    "interactions-api:interaction-detail": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-history": Case(api=True, kwargs=_interaction_pk),
    "interactions-api:interaction-escalate": Case(api=True, kwargs=_interaction_pk),
    "enablement-api:enablementsession-list": Case(api=True, foreign=LIST),
    "enablement-api:enablementsession-detail": Case(api=True, kwargs=_session_pk),
    "enablement-api:enablementattendance-list": Case(api=True, foreign=LIST),
    "enablement-api:enablementattendance-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["enablement_session"].attendances.first().pk}
    ),
    "interactions-api:challengetag-list": Case(api=True, foreign=LIST),
    "interactions-api:challengetag-detail": Case(api=True, foreign=LIST, kwargs=lambda o: {"slug": "slurm"}),
})

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
_writes("enablement-api:enablementattendance-list", lambda o: {
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
_writes("enablement:enablement_add", form_data("enablement:enablement_edit", "enablement_session",
                                                 topic="Second session"), PM, page_put=400)
_writes("enablement:enablement_edit", form_data("enablement:enablement_edit", "enablement_session",
                                                  topic="Changed"), PM, page_put=400)
_writes("enablement:enablement_attendance", lambda o: {"organization": o["organization"].pk,
                                                         "attendee": "Second engineer", "satisfaction": 5},
        {"lead_a", "pm", "staff"})
