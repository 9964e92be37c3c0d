"""Recount the overview's pre-aggregates: the interactions' counts, weeks and tag mentions, and the faults'
program weeks (after a bulk load, a restore, or a change of the program's time zone)."""
from django.core.management.base import BaseCommand

from clusters.health.models import stamp_weeks
from portal.review import tallies


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args, **options) -> None:
        recounted = tallies.rebuild()
        restamped = stamp_weeks()
        self.stdout.write(f"recounted the interactions of {recounted} organizations; "
                          f"{restamped} faults moved to another program week")
