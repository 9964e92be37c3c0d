"""Seed the demo program (idempotent)."""
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils.module_loading import import_string

from sandbox import program as demo


class Command(BaseCommand):
    help = "Create the demo program: organizations, people, workloads, clusters. Safe to run twice."

    def add_arguments(self, parser):
        parser.add_argument("--sso-issuer", default="",
                            help="The issuer of the identity provider run_demo started for Mirai Code (none: its "
                                 "provider record stays disabled).")

    def handle(self, *args, **options):
        with transaction.atomic():
            context = demo.seed_core()
        context["sso_issuer"] = options["sso_issuer"]
        for dotted in demo.DEMO_SEEDERS:
            with transaction.atomic():
                import_string(dotted)(context)
        self.stdout.write(self.style.SUCCESS(
            f"Demo program ready: {len(context['organizations'])} organizations."
        ))
        self.stdout.write(f"Demo logins (password: {demo.DEMO_PASSWORD}):")
        for username, role in demo.LOGINS:
            self.stdout.write(f"  {username:<8} {role}")
