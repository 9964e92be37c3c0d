"""``python manage.py remediate <cluster> --node <host> --action reboot|replace|drain``: propose an action from a
shell, through the same service as the page and the API (guardrails, consent, timeline), and say what became of it."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from clusters.models import Cluster
from clusters.remediation import services
from clusters.remediation.choices import ActionKind


class Command(BaseCommand):
    help = "Propose a node remediation (reboot, replace or drain) on a cluster, as a lead SA would."

    def add_arguments(self, parser):
        parser.add_argument("cluster", help="The cluster: <organization slug>/<name>, or its id.")
        parser.add_argument("--node", action="append", required=True, help="A hostname; repeat for several.")
        parser.add_argument("--action", required=True, choices=ActionKind.values)
        parser.add_argument("--reason", default="", help="Why, for the timeline and the customer.")
        parser.add_argument("--as-user", default="", help="Username of the lead SA proposing (default: the portal).")
        parser.add_argument("--key", default="", help="Idempotency key: the same key never acts twice.")

    def handle(self, *args, **options):
        cluster = self._cluster(options["cluster"])
        actor = None
        if options["as_user"]:
            actor = get_user_model().objects.filter(username=options["as_user"]).first()
            if actor is None:
                raise CommandError(f"No user {options['as_user']!r}.")
        try:
            action, created = services.propose(cluster, kind=options["action"], nodes=options["node"], actor=actor,
                                               reason=options["reason"], key=options["key"])
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        what = "Proposed" if created else "Already proposed"
        self.stdout.write(f"{what}: remediation {action.pk}, {action.get_kind_display().lower()} of "
                          f"{', '.join(action.nodes)} on {cluster}: {action.get_state_display().lower()}")
        if action.refusal:
            self.stdout.write(action.refusal)
            return
        if action.state == "proposed":
            self.stdout.write("Waiting for a customer engineer's approval (the organization's consent policy).")

    def _cluster(self, ref: str) -> Cluster:
        rows = Cluster.objects.select_related("organization")
        found = rows.filter(pk=int(ref)).first() if ref.isdigit() else None
        if found is None and "/" in ref:
            slug, _, name = ref.partition("/")
            found = rows.filter(organization__slug=slug, name=name).first()
        if found is None:
            matches = list(rows.filter(name=ref)[:2])
            found = matches[0] if len(matches) == 1 else None
        if found is None:
            raise CommandError(f"No single cluster {ref!r} (use <organization slug>/<name> or its id).")
        return found
