"""Compute stored accelerator-hours for a past range (after an import, or a change of the rules)."""
from __future__ import annotations

import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from clusters.accounting import services


class Command(BaseCommand):
    help = "Compute accelerator-hours for every closed hour from --start to --end (program days, end exclusive)."

    def add_arguments(self, parser):
        parser.add_argument("--start", required=True, help="YYYY-MM-DD, program time")
        parser.add_argument("--end", help="YYYY-MM-DD, program time (default: now)")
        parser.add_argument("--cluster", type=int, action="append", help="only this cluster id (repeatable)")

    def handle(self, *args, **options):
        try:
            start = services.midnight(datetime.date.fromisoformat(options["start"]))
            end = services.midnight(datetime.date.fromisoformat(options["end"])) if options["end"] else timezone.now()
        except ValueError as exc:
            raise CommandError(f"dates are YYYY-MM-DD: {exc}") from None
        if end <= start:
            raise CommandError("--end must be after --start")
        written = 0
        day = start
        while day < end:  # a week at a time: each batch is one transaction of bounded size
            stop = min(end, day + datetime.timedelta(weeks=1))
            written += services.store(day, stop, options["cluster"])
            day = stop
        services.roll_up()
        self.stdout.write(f"{written} hourly rows computed from {start:%Y-%m-%d} to {end:%Y-%m-%d %H:%M}")
