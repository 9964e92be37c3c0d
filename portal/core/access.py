"""The access policy: which rows of which model a user may view, change, launch or approve.

This module is the only place that decides. Every model that reaches a user has a
``RestrictedQuerySet`` manager whose ``restrict(user, action)`` calls :func:`restrict`; the base views,
API viewsets, exports, search and htmx partials go through it. A model missing from ``POLICY`` is
invisible to everyone but staff: access is denied by default. The models it reads (memberships, specialist teams,
cycles) are looked up in the app registry, so the module imports no models and the querysets can import it.

Roles: ``customer`` and ``lead_sa`` are per organization (``Membership``); program managers read
everything and approve; staff administer everything.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db.models import CharField, Model, Q, QuerySet, Value
from django.utils.translation import gettext

from portal.core import reviewers

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

VIEW = "view"
CHANGE = "change"
LAUNCH = "launch"
APPROVE = "approve"
# Tearing down what still runs (deleting a cluster): the one write an archived cycle's rows still allow, so a
# leaving organization's clusters can be wound down after the cycle they belong to is archived.
TEAR_DOWN = "tear_down"
ACTIONS = (VIEW, CHANGE, LAUNCH, APPROVE, TEAR_DOWN)
ARCHIVED = "archived"
# What rows of an archived program cycle (or rows under a parent that belongs to one) still allow.
ARCHIVED_ALLOWS = frozenset({VIEW, TEAR_DOWN})

CUSTOMER = "customer"
LEAD_SA = "lead_sa"
ORG_ADMIN = "org_admin"  # a customer named to run its organization's sign-in: only what a rule's ``org_admin`` names
SPECIALIST = "specialist"  # not an organization role: the ids under this key are escalation targets


@dataclass(frozen=True)
class Rule:
    """How one model is reached from an organization, and what each role may do with its rows.

    ``path`` is the lookup from the model to ``Organization`` ("" for Organization itself); ``None``
    marks program-wide catalog rows that belong to no organization: a role holding the action in
    any organization reaches every row.
    ``customer_scope`` narrows what customers see (for example: only entries shared with them).
    ``cycle_path`` is the lookup from the model to its program ``Cycle`` (its own ``cycle`` column, or its
    parent's: ``"cluster__cycle"``); rows it leads to an archived cycle allow only ``ARCHIVED_ALLOWS``. A model
    with a ``cycle`` column of its own and no ``cycle_path`` uses that column.
    """

    path: str | None
    customer: frozenset[str] = frozenset({VIEW})
    lead_sa: frozenset[str] = frozenset({VIEW, CHANGE})
    program_manager: frozenset[str] = frozenset({VIEW})
    customer_scope: Callable[[], Q] | None = None
    distinct: bool = False  # set when the path crosses a to-many relation
    # Specialists (members of an escalation target's team) reach rows through their teams, across
    # organizations: ``specialist_path`` is the lookup from the model to ``EscalationTarget``.
    specialist: frozenset[str] = frozenset()
    specialist_path: str | None = None
    cycle_path: str | None = None
    # Reviewers of a call reach the rows assigned to them, across organizations, never one of an organization they
    # lead or belong to, nor one they declared a conflict with: ``reviewer_scope(user, own_org_ids)`` is that Q.
    reviewer: frozenset[str] = frozenset()
    reviewer_scope: Callable[[object, frozenset[int]], Q] | None = None
    org_admin: frozenset[str] = frozenset()

    def org_lookup(self) -> str:
        return f"{self.path}__in" if self.path else "pk__in"


def _shared() -> Q:
    return Q(visibility="shared")


R = frozenset
ALL_LEAD = R({VIEW, CHANGE, LAUNCH})

POLICY: dict[str, Rule] = {
    # portal
    "portal.organization": Rule(path="", lead_sa=R({VIEW})),
    "portal.membership": Rule(path="organization", lead_sa=R({VIEW})),
    "portal.timelineentry": Rule(path="organization", customer_scope=_shared),
    # Cycles: seen through the organizations taking part; program managers start the next one (staff administer).
    "portal.cycle": Rule(path="participations__organization", lead_sa=R({VIEW}), distinct=True,
                         program_manager=R({VIEW, CHANGE})),
    "portal.cycleparticipation": Rule(path="organization", lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE}),
                                      cycle_path="cycle"),
    # Escalation targets (specialist teams): internal, program-wide.
    "portal.escalationtarget": Rule(path=None, customer=R(), lead_sa=R({VIEW})),
    # Identity providers: program managers register each organization's (pages under /sso/providers/), its designated
    # administrator its own; the program's own provider (no organization) is staff's, in the admin.
    "sso.identityprovider": Rule(path="organization", customer=R(), lead_sa=R(), program_manager=R({VIEW, CHANGE}),
                                 org_admin=R({VIEW, CHANGE})),
    "sso.identityproviderchange": Rule(path="provider__organization", customer=R(), lead_sa=R(), org_admin=R({VIEW})),
    # review: program-wide, no organization; program managers (and staff) only
    "review.weeklyreview": Rule(path="", customer=R(), lead_sa=R(), program_manager=R({VIEW, CHANGE}),
                                cycle_path="cycle"),
    "review.actionitem": Rule(path="", customer=R(), lead_sa=R(), program_manager=R({VIEW, CHANGE}),
                              cycle_path="review__cycle"),
    # The overview's pre-aggregates of interactions: seen exactly as the interactions they count.
    "review.interactioncount": Rule(path="organization", lead_sa=R({VIEW}), customer_scope=_shared),
    "review.interactionweek": Rule(path="organization", lead_sa=R({VIEW}), customer_scope=_shared),
    "review.tagmention": Rule(path="organization", lead_sa=R({VIEW}), customer_scope=_shared),
    # workloads
    "workloads.workload": Rule(path="organization"),
    "workloads.instancequota": Rule(path="organization", lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE}),
                                    cycle_path="cycle"),
    "workloads.capacityreservation": Rule(
        path="organization", lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE}), cycle_path="cycle"
    ),
    # A request about an archived cycle's quota is history too (a request for a new quota has no cycle yet).
    "workloads.quotachangerequest": Rule(
        path="organization", program_manager=R({VIEW, APPROVE}), cycle_path="quota__cycle"
    ),
    # Specialists also read the interactions escalated to their teams.
    "interactions.interaction": Rule(
        path="organization", customer_scope=_shared, specialist=R({VIEW}), specialist_path="escalations__target"
    ),
    "interactions.interactioncomment": Rule(
        path="interaction__organization",
        customer=R({VIEW, CHANGE}),
        customer_scope=lambda: Q(interaction__visibility="shared", internal=False),
    ),
    # Sessions are program-wide: seen through the organizations invited (their audience); program
    # managers alone write them (customers of every invited organization read them). Attendance rows
    # (names, scores) are per organization: lead SAs record their organizations' attendance.
    "enablement.enablementsession": Rule(
        path="audience", lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE}), distinct=True, cycle_path="cycle"
    ),
    "enablement.enablementattendance": Rule(path="organization", program_manager=R({VIEW, CHANGE}),
                                           cycle_path="session__cycle"),
    # Cost from Cost Explorer: written by the fetch only; everyone who sees the organization reads it.
    "workloads.costday": Rule(path="organization", lead_sa=R({VIEW})),
    "workloads.costfetch": Rule(path="organization", lead_sa=R({VIEW})),
    # clusters
    "clusters.cluster": Rule(path="organization", lead_sa=ALL_LEAD | {TEAR_DOWN}, cycle_path="cycle"),
    "clusters.launchjob": Rule(path="cluster__organization", lead_sa=ALL_LEAD, cycle_path="cluster__cycle"),
    "clusters.stackevent": Rule(path="stack__cluster__organization", cycle_path="stack__cluster__cycle"),
    "clusters.stack": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    # Program-wide catalog data: every signed-in member with a role reads it (path=None: no organization).
    "clusters.blueprint": Rule(path=None, lead_sa=R({VIEW})),
    # health: customers see their own clusters' health and upload validation runs; the ingestion
    # settings (token, pull credentials) are for lead SAs only.
    # A cluster's health belongs to the cluster's cycle (and moves on with it when it is carried over).
    "health.healthreport": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "health.nodehealth": Rule(path="report__cluster__organization", cycle_path="report__cluster__cycle"),
    "health.gpufault": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "health.validationrun": Rule(path="cluster__organization", customer=R({VIEW, CHANGE}), cycle_path="cluster__cycle"),
    "health.validationjob": Rule(path="cluster__organization", customer=R({VIEW, CHANGE}), cycle_path="cluster__cycle"),
    "health.clusterhealthconfig": Rule(path="cluster__organization", customer=R(), program_manager=R(),
                                       cycle_path="cluster__cycle"),
    "health.clusterhealthstate": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "health.healthpush": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "health.slurmnode": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "health.agentworkitem": Rule(path="cluster__organization", customer=R(), cycle_path="cluster__cycle"),
    # Node remediation: lead SAs propose and cancel (change); a customer engineer of the organization approves or
    # declines (approve); the consent policy is set by the lead SA, read by the customer.
    "remediation.remediationaction": Rule(path="organization", customer=R({VIEW, APPROVE}),
                                          cycle_path="cluster__cycle"),
    "remediation.remediationpolicy": Rule(path="organization"),
    # A change that widens the policy: the lead SA proposes it (change), a customer engineer approves it (approve).
    # Of the organization, not of a cycle: an archived cycle's clusters take no proposal whatever the policy says.
    "remediation.remediationpolicychange": Rule(path="organization", customer=R({VIEW, APPROVE})),
    "remediation.remediationstep": Rule(path="action__organization", cycle_path="action__cluster__cycle"),
    "remediation.remediationnode": Rule(path="action__organization", cycle_path="action__cluster__cycle"),
    "remediation.remediationfault": Rule(path="action__organization", cycle_path="action__cluster__cycle"),
    # HyperPod's own events on a cluster, read by the portal: seen like the cluster's health, written by the poll.
    "remediation.hyperpodevent": Rule(path="cluster__organization", cycle_path="cluster__cycle"),
    "remediation.hyperpodeventcursor": Rule(path="cluster__organization", customer=R(), program_manager=R(),
                                            cycle_path="cluster__cycle"),
    # Capacity accounting: a cluster's accelerator-hours are read like its health.
    "accounting.acceleratorusage": Rule(path="organization", cycle_path="cluster__cycle"),
    "accounting.idlenotice": Rule(path="organization", cycle_path="cluster__cycle"),
    # Thresholds are the lead SAs' to set; everyone of the organization reads what AWS said of its reservations.
    "accounting.accountingsettings": Rule(path="organization", customer=R()),
    "accounting.reservationcheck": Rule(path="organization", lead_sa=R({VIEW})),
    "accounting.organizationday": Rule(path="organization"),
    # What an award asks the program to reserve: its organization's people read it, program managers fulfil or
    # decline it; it belongs to its cycle (and moves on with it).
    "accounting.reservationrequest": Rule(path="organization", lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE}),
                                          cycle_path="cycle"),
    # engagement: escalations are internal (never customers'); specialists reach what is escalated to their
    # teams across organizations, and the interaction it is about, nothing else.
    "engagement.escalation": Rule(
        path="interaction__organization", customer=R(), specialist=R({VIEW, CHANGE}), specialist_path="target"
    ),
    # Outcomes: customers record their own organization's milestones and trained models.
    "engagement.milestone": Rule(path="organization", customer=R({VIEW, CHANGE}), cycle_path="cycle"),
    "engagement.trainedmodel": Rule(path="organization", customer=R({VIEW, CHANGE}), cycle_path="cycle"),
    # Slack links are set by staff; an interaction's thread is seen with the interaction.
    "engagement.slackchannellink": Rule(path="organization", customer=R(), lead_sa=R({VIEW})),
    # A message captured from a linked channel belongs to that channel's organization: its lead SAs see the captures
    # that did not log (customers never; captures from unlinked channels have no organization: staff only).
    "engagement.slackcapture": Rule(path="link__organization", customer=R(), lead_sa=R({VIEW})),
    # The audit trail: an organization's events (its customers' sign-ins and exports, actions in its account)
    # are read by its people; program-wide events (AWS staff signing in, unknown names refused) by staff alone.
    "audit.auditevent": Rule(path="organization", lead_sa=R({VIEW}), program_manager=R()),
    # Calls for the next cycle are public to every signed-in organization; program managers open and award them.
    # An application is its organization's (customers draft it with their lead SA) and its assigned reviewers'
    # (never of an organization they lead or belong to, nor one they declared a conflict with); reviews are the
    # reviewer's own and the program manager's, never the applicant's.
    "calls.call": Rule(path=None, customer=R({VIEW}), lead_sa=R({VIEW}), program_manager=R({VIEW, CHANGE, APPROVE})),
    "calls.application": Rule(path="organization", customer=R({VIEW, CHANGE}), lead_sa=R({VIEW, CHANGE}),
                              program_manager=R({VIEW, CHANGE, APPROVE}), reviewer=R({VIEW}),
                              reviewer_scope=reviewers.applications, cycle_path="call__cycle"),
    "calls.applicationversion": Rule(path="application__organization", lead_sa=R({VIEW}),
                                     reviewer=R({VIEW}), reviewer_scope=reviewers.versions,
                                     cycle_path="application__call__cycle"),
    "calls.reviewassignment": Rule(path="application__organization", customer=R(), lead_sa=R(),
                                   program_manager=R({VIEW, CHANGE}), reviewer=R({VIEW, CHANGE}),
                                   reviewer_scope=reviewers.assignments, cycle_path="application__call__cycle"),
    # Reports to the funder: the report itself is program-wide (its program figures and exports are the program
    # manager's); each organization's part is read by its people before and after issue, its narrative written by
    # its lead SAs while the report is a draft; comments are its people's and the program manager's.
    "funder.funderreport": Rule(path=None, customer=R({VIEW}), lead_sa=R({VIEW}),
                                program_manager=R({VIEW, CHANGE, APPROVE})),
    "funder.funderreportpart": Rule(path="organization"),
    # Sending an issued report to the funder (who, when, to whom, which version): the program manager's record.
    "funder.funderreportsending": Rule(path=None, customer=R(), lead_sa=R(), program_manager=R({VIEW, CHANGE})),
    "funder.funderreportcomment": Rule(path="part__organization", customer=R({VIEW, CHANGE}),
                                       program_manager=R({VIEW, CHANGE})),
    "engagement.slackthread": Rule(path="interaction__organization", customer_scope=lambda: Q(
        interaction__visibility="shared"), lead_sa=R({VIEW})),
}


def _roles(user) -> dict[str, frozenset[int]]:
    """The organizations where the user holds each role, cached on the user object for the request."""
    cached = getattr(user, "_portal_roles", None)
    if cached is None:
        membership, specialist = apps.get_model("portal", "Membership"), apps.get_model("portal", "Specialist")
        # One query for both kinds of role: organization memberships and specialist teams.
        rows = membership.objects.filter(user=user).order_by().values_list("role", "organization_id").union(
            specialist.objects.filter(user=user).order_by()
            .annotate(kind=Value(SPECIALIST, output_field=CharField())).values_list("kind", "target_id"),
            all=True,
        )
        by_role: dict[str, set[int]] = {CUSTOMER: set(), LEAD_SA: set(), SPECIALIST: set(), ORG_ADMIN: set()}
        for role, org_id in rows:
            by_role.setdefault(role, set()).add(org_id)
        cached = {role: frozenset(ids) for role, ids in by_role.items()}
        user._portal_roles = cached
    return cached


def roles_of(user) -> dict[str, frozenset[int]]:
    """The organizations (or, under ``SPECIALIST``, the teams) where a signed-in user holds each role."""
    if not getattr(user, "is_authenticated", False):
        return {}
    return _roles(user)


def led_organizations(user) -> frozenset[int]:
    """The organizations a signed-in user is a lead SA of."""
    return roles_of(user).get(LEAD_SA, frozenset())


def forget(user) -> None:
    """Drop the cached roles (after a membership of this user changes)."""
    if hasattr(user, "_portal_roles"):
        del user._portal_roles


def teams(user) -> frozenset[int]:
    """The escalation targets (specialist teams) the user answers for.

    A specialist holds no organization role: they reach only rows escalated to their teams.
    """
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    return _roles(user).get(SPECIALIST, frozenset())


def is_specialist(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and teams(user))


def is_program_manager(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_program_manager", False))


def is_staff(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and (user.is_staff or user.is_superuser))


def rule_for(model: type[Model]) -> Rule | None:
    return POLICY.get(model._meta.label_lower)


def organization_ids(user, action: str = VIEW, model: type[Model] | None = None) -> frozenset[int] | None:
    """Organizations where ``user`` may perform ``action`` on ``model``; ``None`` means all of them."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    if is_staff(user):
        return None
    rule = rule_for(model) if model is not None else POLICY["portal.organization"]
    if rule is None:
        return frozenset()
    if is_program_manager(user) and action in rule.program_manager:
        return None
    roles = _roles(user)
    ids: set[int] = set()
    if action in rule.lead_sa:
        ids |= roles.get(LEAD_SA, frozenset())
    if action in rule.customer:
        ids |= roles.get(CUSTOMER, frozenset())
    ids |= roles.get(ORG_ADMIN, frozenset()) & roles.get(CUSTOMER, frozenset()) if action in rule.org_admin else set()
    return frozenset(ids)


def restrict(queryset: QuerySet, user: AbstractBaseUser | AnonymousUser, action: str = VIEW) -> QuerySet:
    """Narrow ``queryset`` to the rows ``user`` may ``action``; nothing when in doubt.

    Rows of an archived program cycle are read-only for everyone, and so are the rows under them (a quota's
    change requests, a session's attendance, an archived cluster's health and uploads): through the rule's
    ``cycle_path``, any action but ``ARCHIVED_ALLOWS`` excludes them."""
    qs = _restrict(queryset, user, action)
    path = cycle_path(queryset.model)
    if action not in ARCHIVED_ALLOWS and path:
        qs = qs.exclude(**{f"{path}__status": ARCHIVED})
    return qs


def not_archived(queryset: QuerySet) -> QuerySet:
    """The rows that do not belong to an archived cycle (through the path to it): for the system's own writes,
    such as health pulls, which no user asks for."""
    path = cycle_path(queryset.model)
    return queryset.exclude(**{f"{path}__status": ARCHIVED}) if path else queryset


def cycle_path(model: type[Model]) -> str | None:
    """The lookup from ``model`` to its program cycle: the rule's, else the model's own ``cycle`` column."""
    rule = rule_for(model)
    if rule is not None and rule.cycle_path:
        return rule.cycle_path
    return "cycle" if _has_cycle(model) else None


def archived_cycle(obj):
    """The archived cycle ``obj`` belongs to through its path to the cycle, or None.

    Asked of the database from the parent the row names (its foreign key as it stands in memory), so a row not
    saved yet is judged by the parent it is about to be written under, and a parent carried into the active cycle
    meanwhile counts as active."""
    path = cycle_path(type(obj))
    if not path:
        return None
    first, _, rest = path.partition("__")
    field = type(obj)._meta.get_field(first)
    value = getattr(obj, field.attname, None)
    if value is None:
        return None
    cycles = apps.get_model("portal", "Cycle").objects.filter(status=ARCHIVED)
    if not rest:
        return cycles.filter(pk=value).first()
    return cycles.filter(pk__in=field.related_model._default_manager.filter(pk=value).values(rest)).first()


def archived_refusal(obj, action: str = CHANGE) -> str | None:
    """Why ``action`` on ``obj`` (saved or about to be) is refused because of an archived cycle; None if it is not."""
    if action in ARCHIVED_ALLOWS:
        return None
    cycle = archived_cycle(obj)
    return None if cycle is None else (gettext("This belongs to %(cycle)s, which is archived: its rows are read-only.")
                                       % {"cycle": cycle})


def refuse_archived(obj, action: str = CHANGE) -> None:
    """Raise PermissionDenied (a 403 with the reason, pages and API alike) for a write under an archived cycle."""
    reason = archived_refusal(obj, action)
    if reason:
        raise PermissionDenied(reason)


def refusal(obj, action: str = CHANGE) -> str:
    """Why a visible row may not be changed, in words for the person refused: an archived cycle's rows (and the
    rows under them) are read-only for everyone, anything else is the role."""
    return archived_refusal(obj, action) or gettext("You may view this but not change it.")


def in_archived_cycle(obj) -> bool:
    """The row (or the parent it hangs from) belongs to an archived program cycle: read-only for everyone."""
    return archived_cycle(obj) is not None


def _has_cycle(model: type[Model]) -> bool:
    try:
        field = model._meta.get_field("cycle")
    except FieldDoesNotExist:
        return False
    return getattr(field.related_model, "_meta", None) is not None and field.related_model._meta.label_lower == \
        "portal.cycle"


def _restrict(queryset: QuerySet, user: AbstractBaseUser | AnonymousUser, action: str = VIEW) -> QuerySet:
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    model = queryset.model
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return queryset.none()
    if is_staff(user):
        return queryset
    rule = rule_for(model)
    if rule is None:
        return queryset.none()
    if is_program_manager(user) and action in rule.program_manager:
        return queryset
    roles = _roles(user)
    lead_ids = roles.get(LEAD_SA, frozenset()) if action in rule.lead_sa else frozenset()
    customer_ids = roles.get(CUSTOMER, frozenset()) if action in rule.customer else frozenset()
    if action in rule.org_admin:  # an administrator reaches its organization's rows as a lead SA would, unscoped
        lead_ids = lead_ids | (roles.get(ORG_ADMIN, frozenset()) & roles.get(CUSTOMER, frozenset()))
    if rule.path is None:
        return queryset if (lead_ids or customer_ids) else queryset.none()
    lookup = rule.org_lookup()
    condition = Q(pk__in=[])
    team_ids = teams(user) if action in rule.specialist and rule.specialist_path else frozenset()
    if team_ids:
        by_team = Q(**{f"{rule.specialist_path}__in": team_ids})
        if "__" in rule.specialist_path:  # across a to-many relation: a subquery keeps rows single
            by_team = Q(pk__in=model._default_manager.filter(by_team).values("pk"))
        condition |= by_team
    customer_only = customer_ids - lead_ids
    reviewing = action in rule.reviewer and rule.reviewer_scope is not None
    if reviewing:
        condition |= rule.reviewer_scope(user, roles.get(LEAD_SA, frozenset()) | roles.get(CUSTOMER, frozenset()))
    if lead_ids:
        condition |= Q(**{lookup: lead_ids})
    if customer_only:
        customer_q = Q(**{lookup: customer_only})
        if rule.customer_scope is not None:
            customer_q &= rule.customer_scope()
        condition |= customer_q
    if not lead_ids and not customer_only and not team_ids and not reviewing:
        return queryset.none()
    qs = queryset.filter(condition)
    return qs.distinct() if rule.distinct else qs


def can(user, action: str, obj: Model) -> bool:
    """Whether ``user`` may ``action`` this saved object, asked of the database through the policy."""
    return restrict(type(obj)._default_manager.all(), user, action).filter(pk=obj.pk).exists()


def can_create(user, action: str, obj: Model) -> bool:
    """Whether ``user`` may ``action`` the unsaved row ``obj`` (a proposal on a cluster, a job on a cluster): the
    role in the organization the row's policy path leads to, and no archived cycle on its path to the cycle
    (judged by the parent it names). Writes that make a row rather than change one ask this, so the archived rule
    holds for them as ``restrict`` makes it hold for the rows that exist."""
    rule = rule_for(type(obj))
    organization_id = _organization_of(obj, rule.path) if rule is not None and rule.path is not None else None
    return can_in_organization(user, action, type(obj), organization_id) and archived_refusal(obj, action) is None


def refuse_create(user, action: str, obj: Model, refused: str) -> None:
    """Raise PermissionDenied unless ``user`` may ``action`` the unsaved ``obj``: the archived cycle's reason when
    that is why, else ``refused`` (the role's words)."""
    if not can_create(user, action, obj):
        raise PermissionDenied(archived_refusal(obj, action) or refused)


def _organization_of(obj: Model, path: str) -> int | None:
    """The organization id an unsaved row names through ``path`` (its parents as they stand in memory)."""
    if path == "":
        return obj.pk
    *parents, last = path.split("__")
    current = obj
    for part in parents:
        current = getattr(current, part, None)
        if current is None:
            return None
    return getattr(current, type(current)._meta.get_field(last).attname, None)


def can_in_organization(user, action: str, model: type[Model], organization_id: int | None) -> bool:
    """Whether ``user`` may ``action`` rows of ``model`` belonging to an organization (for creation)."""
    ids = organization_ids(user, action, model)
    if ids is None:
        return True
    return organization_id is not None and organization_id in ids


def sees_internal(user, organization_id: int | None = None) -> bool:
    """Whether the user may see internal (not shared) entries: everyone but customers."""
    if is_staff(user) or is_program_manager(user):
        return True
    roles = _roles(user) if getattr(user, "is_authenticated", False) else {}
    if organization_id is None:
        return bool(roles.get(LEAD_SA))
    return organization_id in roles.get(LEAD_SA, frozenset())
