"""Page sections: one registry, an explicit order, and a builder per section."""
import pytest

from portal.core import sections


def test_organization_page_sections_are_in_their_declared_order():
    templates = [s.template for s in sections.sections(sections.ORGANIZATION_PAGE)]
    assert templates == [
        "engagement/htmx/org_wind_down_section.html",
        "review/org_status_section.html",
        "workloads/workload_org_section.html",
        "workloads/quota_org_section.html",
        "workloads/htmx/cost_org_section.html",
        "workloads/interactions/htmx/interaction_org_section.html",
        "clusters/htmx/organization_section.html",
        "health/readiness_org_section.html",
        "accounting/org_section.html",
        "engagement/htmx/org_outcomes_section.html",
        "calls/htmx/org_applications_section.html",
    ]
    # A failed remediation is the lead SA's work to pick up first; then the open interactions.
    assert [s.template for s in sections.sections(sections.LEAD_HOME)][:2] == [
        "remediation/htmx/lead_failed.html", "workloads/interactions/htmx/interaction_lead_section.html"]


def test_registering_twice_replaces_and_unknown_pages_are_refused():
    before = sections.sections(sections.LEAD_HOME)
    first = before[0]
    sections.register(sections.LEAD_HOME, first.template, first.builder, order=first.order)
    assert sections.sections(sections.LEAD_HOME) == before
    with pytest.raises(ValueError, match="unknown page"):
        sections.register("dashboard", "x.html", lambda request: {}, order=1)


def test_beat_installs_every_declared_periodic_task(db, settings):
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    from portal.celery import app

    # What beat's database scheduler does with the declared schedule when it starts (setup_schedule).
    for name, entry in app.conf.beat_schedule.items():
        DatabaseScheduler.Entry.from_entry(name, app=app, **entry)
    names = set(PeriodicTask.objects.values_list("name", flat=True))
    assert set(settings.CELERY_BEAT_SCHEDULE) <= names
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        task = PeriodicTask.objects.get(name=name)
        assert task.task == entry["task"] and task.enabled
    # One entry per task: the entries the early migrations created are the same rows, not duplicates.
    tasks = list(PeriodicTask.objects.exclude(task="celery.backend_cleanup").values_list("task", flat=True))
    assert len(tasks) == len(set(tasks))
