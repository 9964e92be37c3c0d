"""The organization timeline page: one chronological feed, filtered, loaded as you scroll.

Pagination is by keyset (the last entry's time and id in an opaque cursor), so the 2,000th page
costs what the first does: one indexed query on (organization, occurred_at, id), whatever the
number of entries. Customers get only shared entries of their own organization (the policy's
customer scope on ``TimelineEntry``).
"""
from __future__ import annotations

import base64
from datetime import datetime, time

from django import forms
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.choices import TimelineKind
from portal.core.generic import ObjectView
from portal.core.models import Organization, TimelineEntry

PAGE_SIZE = 50


class TimelineFilterForm(forms.Form):
    kind = forms.ChoiceField(choices=[("", _("All kinds")), *TimelineKind.choices], required=False, label=_("Kind"))
    tag = forms.SlugField(required=False, max_length=64, label=_("Tag"))
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label=_("From"))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label=_("Until"))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            raise forms.ValidationError(_("“From” must not be after “Until”."))
        return data


def with_tag(queryset: QuerySet, tag: str) -> QuerySet:
    """Entries whose ``tags`` list holds ``tag``: JSON containment on PostgreSQL, text match elsewhere."""
    if connection.vendor == "postgresql":
        return queryset.filter(tags__contains=[tag])
    return queryset.filter(tags__icontains=f'"{tag}"')


def encode_cursor(entry: TimelineEntry) -> str:
    raw = f"{entry.occurred_at.isoformat()}|{entry.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int] | None:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        when, pk = base64.urlsafe_b64decode(padded.encode()).decode().split("|")
        parsed = datetime.fromisoformat(when)
        return (parsed, int(pk)) if timezone.is_aware(parsed) else None
    except (ValueError, UnicodeDecodeError):
        return None


def filtered(queryset: QuerySet, data: dict) -> QuerySet:
    if data.get("kind"):
        queryset = queryset.filter(kind=data["kind"])
    if data.get("tag"):
        queryset = with_tag(queryset, data["tag"])
    tz = timezone.get_current_timezone()
    if data.get("since"):
        queryset = queryset.filter(occurred_at__gte=datetime.combine(data["since"], time.min, tzinfo=tz))
    if data.get("until"):
        queryset = queryset.filter(occurred_at__lte=datetime.combine(data["until"], time.max, tzinfo=tz))
    return queryset


def page(queryset: QuerySet, cursor: str | None, size: int = PAGE_SIZE) -> tuple[list[TimelineEntry], str | None]:
    """One page after ``cursor``; the next cursor, or None at the end. One query."""
    position = decode_cursor(cursor) if cursor else None
    if position is not None:
        when, pk = position
        queryset = queryset.filter(Q(occurred_at__lt=when) | Q(occurred_at=when, pk__lt=pk))
    rows = list(queryset.order_by("-occurred_at", "-id")[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return rows, (encode_cursor(rows[-1]) if more and rows else None)


class TimelineView(ObjectView):
    """An organization's timeline, a page of entries at a time (the next page is the htmx partial)."""

    queryset = Organization.objects.all()
    template_name = "portal/timeline.html"
    partial_template_name = "portal/htmx/timeline_entries.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user, org = self.request.user, self.object
        form = TimelineFilterForm(self.request.GET or None)
        data = form.cleaned_data if form.is_valid() else {}
        qs = self.visible(TimelineEntry.objects.filter(organization=org)).select_related("actor")
        entries, next_cursor = page(filtered(qs, data), self.request.GET.get("cursor"))
        query = self.request.GET.copy()
        query.pop("cursor", None)
        if next_cursor:
            query["cursor"] = next_cursor
        ctx.update(
            organization=org, form=form, entries=entries, next_cursor=next_cursor, next_query=query.urlencode(),
            sees_internal=access.sees_internal(user, org.pk),
        )
        return ctx
