"""What interactions add to other apps' pages: the organization page (open interactions, oldest
first, and the quick-log form) and the lead SA's home (everything open in their organizations)."""
from __future__ import annotations

from portal import access
from workloads import services_interactions as services
from workloads.forms_interactions import InteractionQuickForm
from workloads.models import Interaction

OPEN_LIMIT = 25
SUPPORT_SYNC_SECONDS = 15 * 60


def organization_section(request, organization, form=None) -> dict:
    user = request.user
    open_qs = services.open_for(user, organization).prefetch_related("tags")
    rows = list(open_qs[: OPEN_LIMIT + 1])
    can_log = access.can_in_organization(user, access.CHANGE, Interaction, organization.pk)
    return {
        "open_interactions": rows[:OPEN_LIMIT],
        "more_open": len(rows) > OPEN_LIMIT,
        "can_log": can_log,
        "form": (form or InteractionQuickForm()) if can_log else None,
    }


def lead_home_section(request) -> dict:
    rows = list(services.open_for(request.user).prefetch_related("tags")[: OPEN_LIMIT * 2])
    return {"open_interactions": rows}


def ready() -> None:
    """Called from WorkloadsConfig.ready(): register sections and the AWS Support tasks."""
    import workloads.support  # noqa: F401 - registers the Celery tasks
    from portal.celery import app

    # Beat (django-celery-beat's database scheduler) installs this entry when it starts.
    schedule = dict(app.conf.beat_schedule or {})
    schedule.setdefault(
        "sync-open-support-cases", {"task": "workloads.support.sync_open_cases", "schedule": SUPPORT_SYNC_SECONDS}
    )
    app.conf.beat_schedule = schedule
    from portal import views

    entry = ("workloads/htmx/interaction_org_section.html", organization_section)
    if entry not in views.ORGANIZATION_SECTIONS:
        views.ORGANIZATION_SECTIONS.append(entry)
    lead_entry = ("workloads/htmx/interaction_lead_section.html", lead_home_section)
    if lead_entry not in views.LEAD_HOME_SECTIONS:
        views.LEAD_HOME_SECTIONS.append(lead_entry)
