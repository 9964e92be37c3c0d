"""Appending to an organization's timeline: the one function every source calls."""
from __future__ import annotations

from datetime import datetime

from django.contrib.contenttypes.models import ContentType
from django.db.models import Model

from portal.core.choices import Visibility
from portal.core.models import Organization, TimelineEntry
from portal.core.stored_text import Message


def record(
    organization: Organization | int,
    kind: str,
    title: str | Message,
    *,
    source: Model | None = None,
    body: str | Message = "",
    visibility: str = Visibility.SHARED,
    severity: str = "",
    tags: list[str] | None = None,
    actor=None,
    occurred_at: datetime | None = None,
    url: str = "",
) -> TimelineEntry:
    """Append one entry. Sources call this inside their own transaction so both commit together.

    A title or body the portal writes itself is a ``Message`` (portal/core/stored_text.py): its code and parameters are
    stored, rendered in each reader's language, and its English is kept in the text column. The two messages of one
    entry share its parameters (a name they both say is the same value)."""
    org_id = organization if isinstance(organization, int) else organization.pk
    params: dict = {}
    title_code = body_code = ""
    if isinstance(title, Message):
        title_code, params = title.code, {**params, **title.params}
        title = title.english()
    if isinstance(body, Message):
        body_code, params = body.code, {**params, **body.params}
        body = body.english()
    entry = TimelineEntry(
        organization_id=org_id,
        kind=kind,
        title=title[:300],
        body=body,
        title_code=title_code,
        body_code=body_code,
        params=params,
        visibility=visibility,
        severity=severity,
        tags=list(tags or []),
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        url=url or (source.get_absolute_url() if source is not None and hasattr(source, "get_absolute_url") else ""),
    )
    if occurred_at is not None:
        entry.occurred_at = occurred_at
    if source is not None:
        entry.content_type = ContentType.objects.get_for_model(type(source))
        entry.object_id = source.pk
    entry.save()
    return entry
