"""Opening an AWS Support case is a job of ``portal.core.jobs``: the request is a row written first, so a broker that is
down when it is asked for leaves it for the sweep; and no task of the product is sent outside a job row unless it is
listed below with why losing that one message loses nothing."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from portal.celery import app
from portal.core import jobs
from portal.core.jobs import registry
from tests.faults.test_broker_down import private_redis  # noqa: F401 - fixture
from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions import services
from workloads.interactions.desk import tasks
from workloads.interactions.models import SupportCaseRequest

ROOT = Path(__file__).resolve().parents[2]
SEND_CALLS = {"send_on_commit", "send", "apply_async", "delay", "send_task"}
# Sends that are not a job row's, and why nothing is lost when the broker drops one.
OUTSIDE_A_JOB = {
    "interactions.support.sync_case": "re-reads a case from AWS Support; the beat's sync_open_cases sends it for every "
                                      "open case again each period, and the interaction row keeps the last outcome",
    "workloads.spend.fetch_costs": "a periodic fan-out of the beat's cost fetch: the next period asks again",
    "accounting.check_reservations": "a periodic fan-out of the beat's reservation check",
    "clusters.health.tasks.pull_cluster": "a periodic fan-out of the beat's Prometheus pull: the next minute pulls again",
    "clusters.health.tasks.cancel_validation": "the job is already cancelled in its row; the scancel it sends is "
                                               "best effort and the validation sweep times the Slurm job out",
    "remediation.poll_cluster_events": "a periodic fan-out of the beat's HyperPod event read: its cursor has not moved "
                                       "when a read is lost, so the next minute's read finds the same events",
    "remediation.propose_automatic": "a head start on the minute's sweep of kind remediation, which proposes every "
                                     "fault the automatic consent names once, whether or not this send arrived",
}
MACHINERY = {"portal/core/jobs/dispatch.py", "portal/core/jobs/registry.py"}  # the sending itself


def _task_name(obj) -> str:
    return getattr(obj, "name", None) or getattr(obj, "task", None) or str(obj)


def _sends():
    """(file, line, task name) of every task the product sends, the task resolved in its module."""
    for package in ("portal", "workloads", "clusters"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative in MACHINERY or relative.startswith("sandbox/aws/"):
                continue
            tree = ast.parse(path.read_text())
            module = None
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name not in SEND_CALLS:
                    continue
                module = module or importlib.import_module(relative[:-3].replace("/", "."))
                scope = {**vars(module)}
                if name in ("send_on_commit", "send"):
                    try:
                        sender = eval(ast.unparse(func), scope)  # noqa: S307 - the product's own source
                    except NameError:
                        continue
                    if sender not in (jobs.send, jobs.send_on_commit):
                        continue  # another function of that name (a push's own send_on_commit calls jobs')
                target = node.args[0] if name in ("send_on_commit", "send") else func.value
                try:
                    obj = eval(ast.unparse(target), scope)  # noqa: S307 - the product's own source
                except NameError:
                    obj = None  # a local variable: a row's kind, resolved through the registry at run time
                yield relative, node.lineno, _task_name(obj) if obj is not None else ""


def test_every_task_sent_belongs_to_a_job_kind_or_is_listed_with_its_reason():
    kinds = {_task_name(kind.task) for kind in registry.kinds() if hasattr(kind.task, "apply_async")}
    found = list(_sends())
    assert len(found) >= 8, found
    unlisted = [(f, line, name) for f, line, name in found if name not in kinds and name not in OUTSIDE_A_JOB]
    assert not unlisted, f"tasks sent outside a job row (make them a kind of portal.core.jobs, or list why): {unlisted}"
    assert services.OPEN_REQUESTED_CASE_TASK in kinds
    assert all(reason for reason in OUTSIDE_A_JOB.values())


@pytest.mark.django_db
def test_a_case_asked_for_while_the_broker_is_down_is_kept_and_sent_by_the_sweep(
        world, private_redis, django_capture_on_commit_callbacks):  # noqa: F811 - fixture
    import redis as redis_lib

    interaction = InteractionFactory(organization=world.org_a)
    private_redis.stop()
    app._pool = None
    app.amqp._producer_pool = None
    with django_capture_on_commit_callbacks(execute=True):
        assert services.request_support_case(interaction, subject="NCCL hang", body="evidence") is True
    row = SupportCaseRequest.objects.get()
    assert (row.status, row.dispatched_at, row.interaction_id) == ("pending", None, interaction.pk)
    assert registry.recover_kind("support case").sent == 0  # still down: kept
    private_redis.start()
    app._pool = None
    app.amqp._producer_pool = None
    assert registry.recover_kind("support case").sent == 1
    assert redis_lib.Redis.from_url(private_redis.url).llen("default") == 1
    assert registry.recover_kind("support case").sent == 0  # sent once


@pytest.mark.django_db
def test_the_requested_case_is_opened_once_and_the_row_finished(world, aws):
    interaction = InteractionFactory(organization=world.org_a)
    assert services.request_support_case(interaction, subject="NCCL hang", body="evidence") is True
    row = SupportCaseRequest.objects.get()
    case_id = tasks.open_requested_case.apply(args=[row.pk]).get()
    row.refresh_from_db()
    interaction.refresh_from_db()
    assert row.status == "done" and row.finished_at and interaction.support_case_id == case_id
    assert tasks.open_requested_case.apply(args=[row.pk]).get() == "skipped"
    assert services.request_support_case(interaction, subject="again", body="x") is False
