"""Times the portal writes into its own words are in the display time zone and name it (11:51 JST), never UTC
(the walk of every page for an ISO timestamp: test_local_times_walk.py)."""
from __future__ import annotations

import datetime

import pytest

# --- times the portal writes into its own text: the display time zone, named, never "UTC" -------------------------

DEADLINE = datetime.datetime(2026, 12, 7, 2, 51, tzinfo=datetime.UTC)  # 11:51 in Japan


def test_a_launch_jobs_deadline_is_said_in_the_display_time_zone():
    from types import SimpleNamespace

    from clusters.launches.pipeline.steps import deadline_message

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
