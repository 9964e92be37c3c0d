"""The job base (``portal.core.jobs.models.Job``) and the one sweep over the registered kinds (``portal.core.jobs.registry``)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.conf import settings
from django.utils import timezone

from clusters.choices import JobStatus
from clusters.health.models import HealthPush, ValidationJob
from clusters.models import LaunchJob
from clusters.remediation.models import RemediationAction
from portal.core.jobs import registry
from portal.core.models import NotificationDelivery
from portal.engagement.models import SlackCapture
from tests.clusters.factories_clusters import ClusterFactory
from tests.queries import assert_flat_queries

pytestmark = pytest.mark.django_db

OLD_SWEEPS = {
    "clusters.tasks.sweep_launch_jobs": "launch",
    "clusters.health.tasks.sweep_pushes": "push",
    "clusters.health.tasks.sweep_validations": "validation",
    "remediation.sweep": "remediation",
    "portal.notifications.sweep_pending": "notification",
    "engagement.sweep_captures": "slack capture",
}


@pytest.fixture
def sent(monkeypatch):
    """The sends the sweep makes, as (task name, args); the broker takes every one."""
    made = []

    def send(task, *args, **_options):
        made.append((task.name, args))
        return True

    monkeypatch.setattr(registry, "send", send)
    return made


@pytest.fixture
def cluster(world):
    return ClusterFactory(organization=world.org_a, name="jobs-base")


def _rows(cluster, n: int = 1) -> dict[str, list]:
    """``n`` rows of every kind that the broker never took."""
    org, now = cluster.organization, timezone.now()
    made: dict[str, list] = {name: [] for name in OLD_SWEEPS.values()}
    for i in range(n):
        made["launch"].append(LaunchJob.objects.create(cluster=cluster))
        made["push"].append(HealthPush.objects.create(cluster=cluster))
        made["validation"].append(ValidationJob.objects.create(cluster=cluster, key=f"k{i}-{now.timestamp()}",
                                                               upload_base="http://portal.test"))
        made["remediation"].append(RemediationAction.objects.create(
            organization=org, cluster=cluster, kind="reboot", nodes=[f"node-{i}"], key=f"k{i}-{now.timestamp()}",
            state="approved", approved_at=now))
        made["notification"].append(NotificationDelivery.objects.create(channel="email", event_kind="test",
                                                                        title=f"event {i}"))
        made["slack capture"].append(SlackCapture.objects.create(team_id="T", slack_user_id="U", channel_id="C",
                                                                 message_ts=f"{now.timestamp()}.{i}", thread_ts="1"))
    return made


def test_every_kind_is_registered_and_one_beat_entry_sweeps_them():
    assert set(OLD_SWEEPS.values()) <= {kind.name for kind in registry.kinds()}
    tasks = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
    assert tasks.count("portal.jobs.sweep") == 1 and not set(OLD_SWEEPS) & set(tasks)


def test_a_claim_takes_the_lease_once_and_a_stale_attempt_claims_nothing(cluster):
    job = LaunchJob.objects.create(cluster=cluster, attempts=2)
    assert not LaunchJob.claim(job.pk, attempt=1)  # a message from before the latest send
    assert LaunchJob.claim(job.pk, attempt=2)
    assert not LaunchJob.claim(job.pk, attempt=2)  # leased
    job.refresh_from_db()
    assert job.lease_until > timezone.now() and job.heartbeat is not None
    assert LaunchJob.release(job.pk)
    assert LaunchJob.claim(job.pk)  # no attempt: any message


def test_finish_and_fail_refuse_from_a_final_state(cluster):
    job = LaunchJob.objects.create(cluster=cluster)
    assert LaunchJob.claim(job.pk)
    assert LaunchJob.finish(job.pk, JobStatus.SUCCEEDED)
    assert not LaunchJob.fail(job.pk, "too late")
    assert not LaunchJob.finish(job.pk, JobStatus.FAILED)
    job.refresh_from_db()
    assert (job.status, job.error, job.lease_until) == (JobStatus.SUCCEEDED, "", None) and job.finished is not None
    assert not LaunchJob.claim(job.pk)  # a finished job is never claimed again
    delivery = NotificationDelivery.objects.create(channel="email", event_kind="test", title="t")
    assert NotificationDelivery.fail(delivery.pk, "refused", status=NotificationDelivery.FAILED)
    assert not NotificationDelivery.finish(delivery.pk, NotificationDelivery.SENT)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.error) == (NotificationDelivery.FAILED, "refused")


def test_a_release_while_open_never_writes_over_a_verdict(cluster):
    job = LaunchJob.objects.create(cluster=cluster)
    assert LaunchJob.claim(job.pk) and LaunchJob.fail(job.pk, "cancelled")
    assert not LaunchJob.release(job.pk, if_open=True, log="a late step")
    job.refresh_from_db()
    assert job.log == "" and job.error == "cancelled"


def test_the_sweep_sends_the_undispatched_rows_of_every_kind(cluster, sent):
    rows = _rows(cluster)
    done = registry.recover_all()
    assert {name: recovered.sent for name, recovered in done.items() if name in rows} == {name: 1 for name in rows}
    by_kind = {registry.kind_of(name).task_for(made[0]).name: made[0] for name, made in rows.items()}
    assert {task for task, _args in sent} == set(by_kind)
    for task, args in sent:
        row = by_kind[task]
        row.refresh_from_db()
        assert args[0] == row.pk and row.dispatched
        if registry.kind_of(next(n for n, m in rows.items() if m[0] is row)).numbered:
            assert args == (row.pk, 1) and row.attempts == 1
    sent.clear()
    assert sum(recovered.sent for recovered in registry.recover_all().values()) == 0 and sent == []  # nothing waits now


def test_the_sweep_sends_a_dead_workers_job_again_with_the_next_send_number(cluster, sent, settings):
    long_ago = timezone.now() - timedelta(seconds=settings.CLUSTERS_STUCK_SECONDS + 60)
    dead = LaunchJob.objects.create(cluster=cluster, attempts=1, dispatched_at=long_ago, heartbeat=long_ago,
                                    lease_until=long_ago)
    alive = LaunchJob.objects.create(cluster=cluster, attempts=1, dispatched_at=long_ago, heartbeat=long_ago,
                                     lease_until=timezone.now() + timedelta(seconds=60))  # a worker holds it
    assert registry.recover_kind("launch").sent == 1
    assert sent == [("clusters.tasks.launch_cluster", (dead.pk, 2))]
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.attempts == 2 and dead.heartbeat > long_ago and alive.attempts == 1
    assert not LaunchJob.claim(dead.pk, attempt=1)  # the dead worker's chain of polls ends
    assert LaunchJob.claim(dead.pk, attempt=2)


def test_a_broker_outage_leaves_the_rows_for_the_next_sweep(cluster, monkeypatch):
    jobs = [LaunchJob.objects.create(cluster=cluster) for _ in range(3)]
    monkeypatch.setattr(registry, "send", lambda task, *args, **options: False)
    assert registry.recover_kind("launch").sent == 0
    assert [(j.dispatched_at, j.attempts) for j in LaunchJob.objects.filter(pk__in=[j.pk for j in jobs])
            .order_by("pk")] == [(None, 1), (None, 0), (None, 0)]  # one send tried, numbered; the others untried


@pytest.mark.parametrize("name", list(OLD_SWEEPS.values()))
def test_the_sweeps_queries_do_not_grow_with_the_rows(name, cluster, sent):
    kind = registry.kind_of(name)

    def run():
        kind.model.objects.update(dispatched_at=None)
        registry.recover_kind(kind, extra=False)

    def grow(n):
        for _ in range(n):
            _rows(cluster)

    small, large = assert_flat_queries(run, grow=grow)
    assert small <= 8, small


@pytest.mark.parametrize("task_name", list(OLD_SWEEPS))
def test_the_old_sweep_task_names_still_run_and_sweep_their_kind_alone(task_name, cluster, sent):
    current_app.loader.import_default_modules()  # what a worker does at start: every app's tasks module
    rows = _rows(cluster)
    kind = OLD_SWEEPS[task_name]
    current_app.tasks[task_name].apply().get()
    assert [args[0] for _task, args in sent] == [rows[kind][0].pk]
    others = [made[0] for name, made in rows.items() if name != kind]
    assert all(type(row).objects.get(pk=row.pk).dispatched_at is None for row in others)


def test_the_one_sweep_task_runs(cluster, sent):
    current_app.loader.import_default_modules()
    _rows(cluster)
    assert current_app.tasks["portal.jobs.sweep"].apply().get() == len(OLD_SWEEPS)


def test_the_job_core_imports_no_app_above_it():
    """The kinds register themselves: the base and the registry name no app above the core."""
    import ast
    from pathlib import Path

    import portal.core.jobs

    above = ("workloads", "clusters", "portal.engagement", "portal.review")
    for path in Path(portal.core.jobs.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not [n for n in names if n.startswith(above)], (path.name, names)
