"""Recount the overview's interaction pre-aggregates from the interactions (after a bulk load or a restore)."""
from django.core.management.base import BaseCommand

from portal.review import tallies


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args, **options) -> None:
        recounted = tallies.rebuild()
        self.stdout.write(f"recounted the interactions of {recounted} organizations")
