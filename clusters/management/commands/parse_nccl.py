"""Parse an nccl-tests log and print its figures and verdict (``--json`` for the full result)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from clusters.health import nccl
from clusters.management.commands._input import read_input


class Command(BaseCommand):
    help = "Parse nccl-tests output (all_reduce_perf and friends) and judge it against the expected bandwidth."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help='nccl-tests output file, or "-" for standard input')
        parser.add_argument("--instance-type", help="e.g. p5.48xlarge or ml.p5.48xlarge")
        parser.add_argument("--nodes", type=int, help="node count, when the output has no '# Rank' lines")
        parser.add_argument("--collective", help="e.g. all_reduce, when the output does not say")
        parser.add_argument("--json", action="store_true", help="print the full result as JSON")

    def handle(self, *args, **options) -> None:
        data = read_input(options["file"])
        try:
            result = nccl.parse(data, collective=options["collective"], instance_type=options["instance_type"],
                                nodes=options["nodes"])
        except nccl.NcclParseError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result.to_dict(), indent=2))
            return
        shape = f"{result.nodes or '?'} node(s), {result.ranks or '?'} ranks"
        self.stdout.write(f"{result.collective}: {shape}, transport {result.transport or 'unknown'}")
        self.stdout.write(f"peak busbw {result.peak_busbw:g} GB/s, avg busbw {result.avg_busbw:g} GB/s, "
                          f"#wrong {result.wrong_total}, rows {len(result.rows)}")
        self.stdout.write(f"verdict: {result.verdict.upper()}: {result.diagnosis}")
        for note in result.notes:
            self.stdout.write(f"note: {note}")
