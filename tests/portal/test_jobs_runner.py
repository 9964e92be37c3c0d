"""The one step loop (``portal.core.jobs.runner``) and the one state table (``portal.core.jobs.states``), driven by a fake kind
over real validation-job rows: what its ``advance`` does is scripted, the claim, the AWS-error budget, the failure,
the quiet stop and the release are the runner's."""
from __future__ import annotations

import pytest
from django.utils import timezone

from clusters.health.models import ValidationJob
from clusters.models import Cluster, StateChanged
from clusters.remediation.models import RemediationAction
from portal.core.aws import AwsError
from portal.core.jobs import IllegalTransition
from portal.core.jobs.runner import DONE, POLL, Runner
from tests.clusters.factories_clusters import ClusterFactory

pytestmark = pytest.mark.django_db

THROTTLED = AwsError("Rate exceeded", "Throttling", retryable=True)


class Refusal(Exception):
    """The fake kind's own failure, with a reason."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class Fake(Runner):
    """A kind whose step does what the test scripts: an outcome, an exception raised, or a function of the row."""

    model = ValidationJob
    failures = (Refusal,)

    def __init__(self, *script, max_aws_errors=None):
        self.script = list(script)
        self.max_aws_errors = max_aws_errors
        self.advanced = 0

    def advance(self, job):
        self.advanced += 1
        what = self.script.pop(0)
        if isinstance(what, Exception):
            raise what
        return what(job) if callable(what) else what

    def fail(self, job, error, reason):
        job.transition("failed", error=error, failure_reason=reason)
        return DONE


@pytest.fixture
def job(world):
    cluster = ClusterFactory(organization=world.org_a, name="runner", state="ready")
    return ValidationJob.objects.create(cluster=cluster, key="runner", upload_base="http://portal.test")


def row(job):
    return ValidationJob.objects.get(pk=job.pk)


def test_the_aws_error_budget_polls_until_it_is_spent_then_fails(job, settings):
    settings.JOB_MAX_AWS_ERRORS = 3
    fake = Fake(THROTTLED, THROTTLED, THROTTLED)
    assert [fake.step(job.pk) for _ in range(3)] == [POLL, POLL, DONE]
    failed = row(job)
    assert (failed.state, failed.failure_reason, failed.error) == ("failed", "throttling", "Rate exceeded")
    assert (failed.polls, failed.aws_errors, failed.lease_until) == (3, 2, None)
    assert failed.finished_at is not None and failed.token_hash == ""
    assert fake.step(job.pk) == DONE and fake.advanced == 3  # a failed job is never claimed again


def test_a_kind_declares_its_own_budget_and_a_clean_step_starts_the_count_again(job, settings):
    settings.JOB_MAX_AWS_ERRORS = 3
    fake = Fake(THROTTLED, POLL, THROTTLED, THROTTLED)
    assert [fake.step(job.pk) for _ in range(4)] == [POLL, POLL, POLL, POLL]
    assert (row(job).state, row(job).aws_errors) == ("pending", 2)
    strict = Fake(THROTTLED, max_aws_errors=1)
    assert strict.step(job.pk) == DONE
    assert row(job).state == "failed"


def test_an_aws_refusal_fails_at_once_and_the_kinds_own_failure_keeps_its_reason(job, world):
    assert Fake(AwsError("no", "AccessDenied")).step(job.pk) == DONE
    assert (row(job).state, row(job).failure_reason) == ("failed", "access_denied")
    other = ValidationJob.objects.create(cluster=job.cluster, key="other", upload_base="http://portal.test")
    assert Fake(Refusal("no head node", "no_head_node")).step(other.pk) == DONE
    assert (row(other).failure_reason, row(other).error) == ("no_head_node", "no head node")


def test_an_unexpected_error_fails_the_row_visibly(job):
    assert Fake(KeyError("InstanceId")).step(job.pk) == DONE
    failed = row(job)
    assert (failed.state, failed.failure_reason) == ("failed", "error")
    assert failed.error == "Unexpected error: KeyError: 'InstanceId'"
    assert failed.lease_until is None


def test_an_illegal_move_raises_the_one_illegal_transition(job):
    with pytest.raises(IllegalTransition, match="pending → done is not allowed"):
        row(job).transition("done")
    assert row(job).state == "pending" and row(job).finished_at is None
    stale, current = row(job), row(job)
    current.transition("cancelled")
    with pytest.raises(IllegalTransition, match="expected pending, found cancelled"):
        stale.transition("failed")
    assert stale.state == "cancelled"  # the copy that lost was reloaded
    assert issubclass(StateChanged, IllegalTransition)


def test_the_cluster_and_the_remediation_lifecycles_raise_it_too(job, world):
    cluster = Cluster.objects.get(pk=job.cluster_id)
    with pytest.raises(IllegalTransition):
        cluster.transition("creating")  # ready → creating
    action = RemediationAction.objects.create(organization=world.org_a, cluster=cluster, kind="reboot", nodes=["n"],
                                              key="k", state="proposed")
    with pytest.raises(IllegalTransition):
        action.transition("done")


def test_a_move_made_elsewhere_while_the_step_ran_stops_it_quietly(job):
    def cancelled_meanwhile(stepped):
        row(stepped).transition("cancelled")
        stepped.transition("submitted")  # this copy still reads pending: the compare-and-set refuses
        return POLL

    assert Fake(cancelled_meanwhile).step(job.pk) == DONE
    stopped = row(job)
    assert (stopped.state, stopped.error, stopped.lease_until, stopped.polls) == ("cancelled", "", None, 1)


def test_the_lease_is_held_while_a_step_runs_and_released_after_it(job, django_assert_num_queries):
    def racing(stepped):
        held = row(stepped)
        assert held.lease_until > timezone.now() and held.heartbeat is not None
        assert Fake().step(stepped.pk) == DONE  # a second delivery claims nothing, advances nothing
        return POLL

    assert Fake(racing).step(job.pk) == POLL
    assert row(job).lease_until is None and row(job).polls == 1
    with django_assert_num_queries(3):  # the claim, the row, the release
        assert Fake(POLL).step(job.pk) == POLL
    assert row(job).lease_until is None and row(job).polls == 2


def test_a_message_from_an_older_send_claims_nothing(job):
    ValidationJob.objects.filter(pk=job.pk).update(attempts=2)
    fake = Fake(POLL)
    assert fake.step(job.pk, attempt=1) == DONE and fake.advanced == 0
    assert fake.step(job.pk, attempt=2) == POLL and fake.advanced == 1
