"""The hourly accounting run (beat: "Account accelerator-hours"): closed hours, the roll-up, idle capacity."""
from __future__ import annotations

from celery import shared_task

from clusters.accounting import idle, services


@shared_task(name="accounting.catch_up")
def catch_up() -> int:
    """Idempotent: a second run, or two at once, leaves the same rows and sends no second notice."""
    written = services.catch_up()
    idle.check()
    return written
