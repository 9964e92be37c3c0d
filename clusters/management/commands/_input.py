"""Shared input handling for the parser commands: a path, or "-" for standard input."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError


def read_input(path: str) -> bytes:
    """Read the whole input as bytes; the parsers decide whether it is text."""
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
