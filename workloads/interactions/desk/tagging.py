"""Suggesting challenge tags from what an interaction says (log lines, error names)."""
from __future__ import annotations

import re
from functools import lru_cache

from workloads.interactions.models import ChallengeTag


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error:
        return None


def matches(signature: dict, text: str) -> bool:
    match = _compiled(signature.get("match", ""))
    if match is None or not signature.get("match") or not match.search(text):
        return False
    unless = signature.get("unless")
    if unless:
        unless_re = _compiled(unless)
        if unless_re is not None and unless_re.search(text):
            return False
    return True


def suggest(text: str, tags=None) -> list[ChallengeTag]:
    """The tags whose signatures match ``text`` (in taxonomy order)."""
    if not text:
        return []
    tags = list(tags if tags is not None else ChallengeTag.objects.all())
    return [tag for tag in tags if any(matches(sig, text) for sig in tag.signatures or [])]
