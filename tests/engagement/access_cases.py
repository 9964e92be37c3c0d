"""Route cases of the engagement model: escalations, outcomes, program cycles, the Slack bridge."""
from __future__ import annotations

from tests.routecases import (
    _SPECIALIST,
    _UNSEEN_ORG,
    FORBIDDEN,
    LEAD,
    LIST,
    OBJECTS,
    PM,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
    api_data,
    form_data,
)


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
    from portal.core.models import Cycle, CycleParticipation

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


def _scheduled_cycle(w):
    """The next cycle, scheduled to start in a week (the active one is organization A's cycle)."""
    import datetime

    from django.utils import timezone

    from portal.core.models import Cycle, CycleParticipation

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
