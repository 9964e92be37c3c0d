"""Parse a dcgm-exporter / EFA exporter scrape and print node verdicts and faults (``--json`` for all of it)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from clusters.health.readers import reason_texts
from clusters.health.readers.prometheus import ParseError
from clusters.health.readers.summary import summarize
from clusters.management.commands._input import read_input
from portal.core.instance_types import UnknownInstanceType


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
            shown = f"{value:g}" if summary.collected.get(name, True) else "not collected"
            self.stdout.write(f"  {name}: {shown}")
        for missing in summary.missing_signals:
            self.stdout.write(f"not collected: {missing['signal']} ({missing['metric']}): {missing['how']}")
        for note in summary.notes:
            self.stdout.write(f"note: {note}")
        for node in summary.nodes:
            efa = f"{node.efa_devices_seen} EFA devices" if node.efa_collected else "EFA not collected"
            self.stdout.write(f"{node.hostname}: {node.verdict} ({node.model or 'model not labelled'}, "
                              f"{node.gpus_seen} GPUs, {efa})")
            for reason in node.reasons:
                self.stdout.write(f"  - {reason_texts.shown(reason)}")
