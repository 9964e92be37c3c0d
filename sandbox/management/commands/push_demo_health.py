"""The demo's emulated exporters: push every ready cluster's health while the demo runs (sandbox/live.py)."""
import time

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from sandbox import live as demo_live


class Command(BaseCommand):
    help = "Keep the demo's clusters reporting their health (manage.py run_demo starts it). Ctrl-C stops it."

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=60, help="Seconds between rounds.")
        parser.add_argument("--once", action="store_true", help="One round, then stop.")

    def handle(self, *args, every: float, once: bool, **options):
        while True:
            pushed = demo_live.refresh()
            if pushed:
                self.stdout.write(f"Demo health: pushed {pushed} cluster report(s).")
            if once:
                return
            time.sleep(every)
            close_old_connections()  # a long-running process: a connection the database dropped is replaced
