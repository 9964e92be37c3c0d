"""An organization's narrative in both languages, drafted from the period's timeline, and the translations a
report still lacks.

The draft is rendered from what the timeline and the outcomes hold as codes and values (each shared entry's kind,
severity and day, the milestones' kinds and days, the models released), through the catalogue, once per language:
the Japanese draft is the portal's own words, never a machine translation of the English one. The entries' titles
are people's free text in one language, so the draft leaves them out; the lead SA edits both drafts into prose.
Each language of the report prints its own narrative; a part with one language written and the other empty is
flagged on the report's page and refused at issue (``missing``).
"""
from __future__ import annotations

import datetime
from collections import Counter

from django.utils import formats, timezone, translation
from django.utils.translation import gettext, ngettext

from portal.core.choices import Severity, TimelineKind, Visibility
from portal.core.models import TimelineEntry
from portal.engagement.choices import MilestoneKind
from portal.engagement.models import Milestone, TrainedModel

LANGUAGES = ("en", "ja")
LINES = 12


def _facts(organization_id: int, since: datetime.datetime, until: datetime.datetime, first_day: datetime.date,
           last_day: datetime.date) -> dict:
    entries = list(TimelineEntry.objects.filter(organization_id=organization_id, visibility=Visibility.SHARED,
                                                occurred_at__gte=since, occurred_at__lt=until)
                   .order_by("occurred_at", "id").values("occurred_at", "kind", "severity"))
    milestones = list(Milestone.objects.filter(organization_id=organization_id, reached_on__gte=first_day,
                                               reached_on__lte=last_day).order_by("reached_on", "kind")
                      .values_list("kind", "reached_on"))
    released = list(TrainedModel.objects.filter(organization_id=organization_id, released_on__gte=first_day,
                                                released_on__lte=last_day).order_by("released_on", "name")
                    .values_list("name", "released_on"))
    return {"entries": entries, "milestones": milestones, "released": released}


def _day(value) -> str:
    return formats.date_format(value, "Y-m-d")


def _label(choices, code: str) -> str:
    return str(choices(code).label) if code in choices.values else code


def render(facts: dict, first_day: datetime.date, last_day: datetime.date, language: str) -> str:
    """The draft in ``language`` from ``facts`` (codes and values only)."""
    with translation.override(language):
        entries = facts["entries"]
        lines = [gettext("From %(start)s to %(end)s:") % {"start": _day(first_day), "end": _day(last_day)}]
        if not entries and not facts["milestones"] and not facts["released"]:
            lines.append(gettext("- No shared event was recorded in the period."))
            return "\n".join(lines)
        if entries:
            counts = Counter(e["kind"] for e in entries)
            lines.append(ngettext("- %(count)s event on the timeline: %(kinds)s.",
                                  "- %(count)s events on the timeline: %(kinds)s.", len(entries))
                         % {"count": len(entries), "kinds": gettext(", ").join(
                             f"{_label(TimelineKind, kind)} {n}" for kind, n in sorted(counts.items()))})
        for kind, day in facts["milestones"]:
            lines.append(gettext("- %(day)s: milestone reached, %(milestone)s.")
                         % {"day": _day(day), "milestone": _label(MilestoneKind, kind)})
        for name, day in facts["released"]:
            lines.append(gettext("- %(day)s: model %(name)s released.") % {"day": _day(day), "name": name})
        for e in entries[:LINES]:
            day = _day(timezone.localtime(e["occurred_at"]).date())
            if e["severity"]:
                lines.append(gettext("- %(day)s: %(kind)s (%(severity)s).") % {
                    "day": day, "kind": _label(TimelineKind, e["kind"]), "severity": _label(Severity, e["severity"])})
            else:
                lines.append(gettext("- %(day)s: %(kind)s.") % {"day": day, "kind": _label(TimelineKind, e["kind"])})
        return "\n".join(lines)


def draft(organization_id: int, since: datetime.datetime, until: datetime.datetime, first_day: datetime.date,
          last_day: datetime.date) -> dict[str, str]:
    """The drafted narrative of one organization, {"en": ..., "ja": ...}."""
    facts = _facts(organization_id, since, until, first_day, last_day)
    return {language: render(facts, first_day, last_day, language) for language in LANGUAGES}


def missing(parts) -> list[tuple[str, str]]:
    """(organization, language) of every part written in one language and not the other."""
    found = []
    for part in parts:
        english, japanese = part.narrative.strip(), part.narrative_ja.strip()
        if english and not japanese:
            found.append((part.organization.name, "ja"))
        elif japanese and not english:
            found.append((part.organization.name, "en"))
    return found


def describe(gaps: list[tuple[str, str]]) -> str:
    names = {"en": gettext("English"), "ja": gettext("Japanese")}
    return gettext(", ").join(f"{org} ({names[lang]})" for org, lang in gaps)
