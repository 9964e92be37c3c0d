"""Tasks of the program core, the one recovery of background jobs among them."""
from celery import shared_task

from portal.core import submissions
from portal.core.jobs import registry
from portal.core.metrics import broker, collector

# The notification tasks live beside their service; importing them registers them with the worker.
from portal.core.notifications import deliver, sweep_pending  # noqa: F401


@shared_task(name="portal.ping")
def ping(value: str = "pong") -> str:
    """Answers with its argument: lets /healthz and the tests prove a worker consumes tasks."""
    return value


@shared_task(name="portal.expire_submissions")
def expire_submissions() -> int:
    """Hourly: forget submission keys past the time they are honoured for (``SUBMISSION_KEY_TTL_HOURS``)."""
    return submissions.expire()


@shared_task(name="portal.jobs.sweep")
def recover_jobs() -> int:
    """Every minute: each registered kind of job's own part (time-outs, proposals, leftovers), then the rows the
    broker never took and the rows whose worker died, of every kind (``portal.core.jobs.registry``). Answers how many
    rows it sent."""
    sent = sum(recovered.sent for recovered in registry.recover_all().values())
    broker.stamp(collector.SWEEP_STAMP)  # /metrics: the alert on a sweep that stopped reads it
    return sent
