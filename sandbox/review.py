"""Demo: last week's review, frozen, with notes and action items (one done, one still open). Idempotent."""
from __future__ import annotations

import datetime

from django.utils import timezone

from portal.review import figures
from portal.review.models import ActionItem, WeeklyReview, week_start_of

NOTES = """Kotoba Labs: all_reduce at 30 GB/s on 4 nodes — NCCL fell back to sockets (aws-ofi-nccl missing from the
container). Fix shared with every team on P5; re-run scheduled.
Shirakawa AI: capacity block ends in 12 days; extension requested.
Common challenge this week: FSx for Lustre throughput sizing for checkpoints."""

ITEMS = (
    ("Share the aws-ofi-nccl container fix with every P5 team", "lead", 2, True),
    ("Confirm the Shirakawa AI capacity block extension with the account team", "pm", 5, False),
    ("Re-run the NCCL validation on Kotoba Labs' cluster", "lead", 3, False),
)


def seed(context: dict) -> dict:
    pm = context["pm"]
    leads = context["leads"]
    this_week = week_start_of(timezone.localdate())
    last_week = this_week - datetime.timedelta(weeks=1)
    frozen_at = timezone.make_aware(datetime.datetime.combine(last_week + datetime.timedelta(days=4),
                                                              datetime.time(10, 0)))
    review, created = WeeklyReview.objects.get_or_create(
        week_start=last_week,
        defaults={"frozen_at": frozen_at, "frozen_by": pm, "notes": NOTES,
                  "figures": figures.overview(pm, now=frozen_at)},
    )
    if created:
        owners = {"pm": pm, **leads}
        for title, owner, due_in, done in ITEMS:
            ActionItem.objects.create(review=review, title=title, owner=owners[owner],
                                      due=last_week + datetime.timedelta(days=due_in), done=done,
                                      done_at=frozen_at if done else None)
    context["weekly_review"] = review
    return context
