"""Parse a dcgm-exporter / EFA exporter scrape and print node verdicts and faults (``--json`` for all of it)."""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from clusters.health.prometheus import ParseError
from clusters.health.summary import summarize
from clusters.instance_types import UnknownInstanceType


def read_input(path: str) -> bytes:
    """Read the whole input as bytes ("-" is standard input); the parser decides whether it is text."""
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc


class Command(BaseCommand):
    help = "Summarise GPU and EFA health from dcgm-exporter / EFA exporter text (Prometheus format)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help='scrape file, or "-" for standard input')
        parser.add_argument("--instance-type", help="e.g. p5.48xlarge; gives the expected GPU and EFA counts")
        parser.add_argument("--json", action="store_true", help="print the full summary as JSON")

    def handle(self, *args, **options) -> None:
        data = read_input(options["file"])
        try:
            summary = summarize(data, options["instance_type"])
        except (ParseError, UnknownInstanceType) as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(summary.to_dict(), indent=2))
            return
        share = summary.healthy_gpu_share
        self.stdout.write(f"{len(summary.nodes)} node(s), {summary.gpus_seen}/{summary.gpus_expected} GPUs seen, "
                          f"healthy GPU share {'n/a' if share is None else f'{share:.1%}'}")
        for name, value in summary.panels.items():
            self.stdout.write(f"  {name}: {value:g}")
        for node in summary.nodes:
            self.stdout.write(f"{node.hostname}: {node.verdict}")
            for reason in node.reasons:
                self.stdout.write(f"  - {reason}")
