"""Times on pages are in the display time zone and the locale's format: no page shows an ISO timestamp
("2026-12-07T02:51", UTC) in its text. ``datetime=`` and data attributes keep ISO (machines read them)."""
from __future__ import annotations

import datetime
import re

import pytest
from django.conf import settings
from django.urls import reverse

from tests.access_cases import ROUTES
from tests.portal.test_routes import all_routes, module_world, signed_in_sessions

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
CALLBACKS = {route_id: route.callback for route_id, route in all_routes().items()}
PAGES = sorted(name for name in ROUTES if name in CALLBACKS and not name.startswith(("api", "schema"))
               and "api" not in name.split(":")[0])


def visible(html: str) -> str:
    """The page's text as a reader sees it: tags (and their attributes) and scripts removed."""
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"<[^>]*>", " ", html)


@pytest.fixture(scope="module")
def walk(django_db_setup, django_db_blocker):
    with module_world(django_db_blocker) as built:
        built.sessions = signed_in_sessions(built.users)
        yield built


@pytest.mark.parametrize("name", PAGES)
def test_no_page_shows_an_iso_timestamp(name, walk, db, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(walk.objs))
    found = {}
    for role in ("staff", "lead_a"):
        client.cookies[settings.SESSION_COOKIE_NAME] = walk.sessions[role]
        response = client.get(url, HTTP_ACCEPT_LANGUAGE="ja", HTTP_HX_REQUEST="true" if "htmx" in name else "")
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        text = visible(response.content.decode())
        hits = ISO_TIME.findall(text)
        if hits:
            found[role] = [text[max(0, text.find(h) - 80): text.find(h) + 40] for h in hits[:3]]
    assert not found, found


# --- times the portal writes into its own text: the display time zone, named, never "UTC" -------------------------

DEADLINE = datetime.datetime(2026, 12, 7, 2, 51, tzinfo=datetime.UTC)  # 11:51 in Japan


def test_a_launch_jobs_deadline_is_said_in_the_display_time_zone():
    from types import SimpleNamespace

    from clusters.launches.pipeline import deadline_message

    job = SimpleNamespace(get_kind_display=lambda: "Create", created=DEADLINE - datetime.timedelta(minutes=90),
                          deadline=DEADLINE)
    said = deadline_message(job)
    assert "(2026-12-07 11:51 JST, " in said and "UTC" not in said and "02:51" not in said


def test_a_slack_thread_logged_as_an_interaction_names_its_times_in_the_display_time_zone():
    from portal.engagement.slack import _thread_markdown

    text = _thread_markdown([{"ts": str(DEADLINE.timestamp()), "user": "U1", "text": "NCCL hangs"}])
    assert text.startswith("**<@U1>** 2026-12-07 11:51 JST") and "UTC" not in text


@pytest.mark.django_db
def test_a_validation_that_never_ran_says_its_deadline_in_the_display_time_zone(world):
    from clusters.health.models import ValidationJob
    from clusters.health.validation import service as validation
    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a, name="tz-val")
    job = ValidationJob.objects.create(cluster=cluster, key="tz", upload_base="http://portal.invalid",
                                       collectives=["all_reduce"], expected=["all_reduce"], deadline=DEADLINE)
    assert validation.time_out() == 1
    job.refresh_from_db()
    assert job.state == "timed_out"
    assert "before 2026-12-07 11:51 JST (0 of 1 outputs received)" in job.error and "UTC" not in job.error


@pytest.mark.django_db
def test_a_remediation_past_its_deadline_says_it_in_the_display_time_zone(world, aws):
    from clusters.remediation import services
    from clusters.remediation.choices import ActionState
    from clusters.remediation.models import RemediationAction
    from tests.remediation.factories_remediation import (
        FAULTY,
        RemediationPolicyFactory,
        faulty_report,
        hyperpod_cluster,
    )
    from tests.remediation.test_remediation import run

    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", cooldown_hours=24)
    cluster = hyperpod_cluster(world.org_a)
    faulty_report(cluster)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    RemediationAction.objects.filter(pk=action.pk).update(deadline=DEADLINE)
    action = run(action)
    assert action.state == ActionState.FAILED
    assert action.error == "Past the deadline (2026-12-07 11:51 JST)."
