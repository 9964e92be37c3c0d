"""Tasks of the program core."""
from celery import shared_task


@shared_task(name="portal.ping")
def ping(value: str = "pong") -> str:
    """Answers with its argument: lets /healthz and the tests prove a worker consumes tasks."""
    return value


# The notification task lives beside its service; importing it registers it with the worker.
from portal.notifications import deliver  # noqa: E402,F401


@shared_task(name="portal.expire_submissions")
def expire_submissions() -> int:
    """Hourly: forget submission keys past the time they are honoured for (``SUBMISSION_KEY_TTL_HOURS``)."""
    from portal import submissions

    return submissions.expire()
