"""Input reading shared by the triage commands (a leading underscore keeps Django from listing it)."""
import sys

from django.core.management.base import CommandError


def read_input(path: str) -> bytes:
    """Read the whole input as bytes ("-" is standard input); the parser decides whether it is text."""
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
