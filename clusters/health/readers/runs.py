"""One entry point for collective test output: nccl-tests (GPU clusters) or Neuron nccom-test
(Trainium clusters). The upload page, the API and the ``parse_nccl`` command all read through it,
so they accept the same logs and give the same figures."""
from __future__ import annotations

import contextlib
from collections.abc import Iterable

from clusters.health.readers import nccl, nccom
from clusters.health.readers.nccl import NcclParseError, NcclResult

__all__ = ["NcclParseError", "parse_run"]


def parse_run(text: str | bytes | Iterable, collective: str | None = None, instance_type: str | None = None,
              nodes: int | None = None) -> NcclResult:
    """Parse and judge a collective test log; the tool is told from the text itself."""
    if not isinstance(text, (str, bytes, bytearray)):
        text = "\n".join(line.decode("utf-8", "replace") if isinstance(line, bytes) else line.rstrip("\n")
                         for line in text)
    if isinstance(text, (bytes, bytearray)) and b"\x00" not in text:
        with contextlib.suppress(UnicodeDecodeError):  # nccl.parse says why
            text = bytes(text).decode("utf-8")
    reader = nccom if nccom.looks_like(text) else nccl
    return reader.parse(text, collective=collective, instance_type=instance_type, nodes=nodes)
