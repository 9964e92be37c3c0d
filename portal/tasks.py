"""Tasks of the program core."""
from celery import shared_task


@shared_task(name="portal.ping")
def ping(value: str = "pong") -> str:
    """Answers with its argument: lets /healthz and the tests prove a worker consumes tasks."""
    return value
