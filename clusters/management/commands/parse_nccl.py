"""Parse an nccl-tests (or Neuron nccom-test) log and print its figures and verdict (``--json`` for all of it)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from clusters.health.readers import nccl, runs
from clusters.management.commands._input import read_input


class Command(BaseCommand):
    help = "Parse nccl-tests output (all_reduce_perf and friends) and judge it against the expected bandwidth."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help='nccl-tests output file, or "-" for standard input')
        parser.add_argument("--instance-type", help="e.g. p5.48xlarge or ml.p5.48xlarge")
        parser.add_argument("--nodes", type=int, help="node count, when the output has no '# Rank' lines")
        parser.add_argument("--collective", help="e.g. all_reduce; read or inferred from the output when left out")
        parser.add_argument("--json", action="store_true", help="print the full result as JSON")

    def handle(self, *args, **options) -> None:
        data = read_input(options["file"])
        try:
            result = runs.parse_run(data, collective=options["collective"], instance_type=options["instance_type"],
                                    nodes=options["nodes"])
        except nccl.NcclParseError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result.to_dict(), indent=2))
            return
        for index, run in enumerate(result.runs or [result]):
            if result.runs:
                self.stdout.write(f"run {index + 1} of {len(result.runs)}"
                                  f"{' (shown first in JSON as the primary run)' if index == result.primary_run else ''}:")
            self._run(run)

    def _run(self, result) -> None:
        shape = f"{result.nodes or '?'} node(s), {result.ranks or '?'} ranks"
        named = "" if result.collective_source in ("log", "given") else f" ({result.collective_source})"
        self.stdout.write(f"{result.tool} {result.collective}{named}: {shape}, "
                          f"hardware {result.gpu_model or result.hardware or 'unknown'}, "
                          f"transport {result.transport or 'unknown'}")
        self.stdout.write(f"peak busbw {result.peak_busbw:g} GB/s, avg busbw {result.avg_busbw:g} GB/s, "
                          f"plateau bus bandwidth {'n/a' if result.plateau_busbw is None else f'{result.plateau_busbw:g} GB/s'}, "
                          f"#wrong {result.wrong_total}, rows {len(result.rows)}")
        self.stdout.write(f"versions: NCCL {result.nccl_version or '?'}, aws-ofi-nccl {result.ofi_version or '?'}")
        self.stdout.write(f"verdict: {result.verdict.upper()}: {result.diagnosis}")
        for note in result.notes:
            self.stdout.write(f"note: {note}")
