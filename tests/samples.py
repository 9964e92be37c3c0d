"""Published outputs the readers are tested on, read where the team keeps them: outside the repository.

Logs and scrapes copied from public repositories and threads are someone else's text, so the project does not
carry them. They sit in ``shared/samples/`` (``fixtures``, ``real``, ``real2``, ``real3``, each with its
``SOURCES.md``) beside the checkout: a CI clone has ``shared/`` next to it, a developer's checkout is
``/work/main`` with ``/work/shared`` next to it, and a worktree under ``/work/wt/`` finds the same folder one
level further up. A clone without that folder skips the tests that need it, saying why; fixtures the team
writes itself stay in ``tests/data/``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent


def samples_root(start: Path = REPOSITORY) -> Path | None:
    """The nearest ``shared/samples`` folder beside ``start`` or beside one of its parents, or None."""
    for folder in (start, *start.parents):
        candidate = folder.parent / "shared" / "samples"
        if candidate.is_dir():
            return candidate
    return None


ROOT = samples_root()
SKIP_REASON = ("published outputs are read from ../shared/samples/ beside the repository, and no such folder "
               f"was found above {REPOSITORY}")


def folder(name: str) -> Path:
    """One set of published outputs (``fixtures``, ``real``, ``real2``, ``real3``); skips the test when the
    shared folder is absent."""
    if ROOT is None or not (ROOT / name).is_dir():
        pytest.skip(SKIP_REASON if ROOT is None else f"{ROOT / name} is absent")
    return ROOT / name


def path(name: str, set_name: str = "fixtures") -> Path:
    """The path of one published output; skips when the shared folder is absent."""
    return folder(set_name) / name


def text(name: str, set_name: str = "fixtures") -> str:
    """The text of one published output; skips when the shared folder is absent."""
    return path(name, set_name).read_text()


def glob(pattern: str, set_name: str = "fixtures") -> list[Path]:
    """Published outputs matching ``pattern``, for parametrizing at collection time: empty (so the
    parametrized test is skipped, not failed) when the shared folder is absent."""
    if ROOT is None or not (ROOT / set_name).is_dir():
        return []
    return sorted((ROOT / set_name).glob(pattern))
