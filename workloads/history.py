"""Readable change history: django-simple-history records turned into a chronological diff.

Values are shown as people read them (choice labels, user names, one line per framework or component
added, removed or re-versioned), never as raw JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from django.contrib.auth import get_user_model
from django.utils import timezone

from portal.core.field_labels import FIELD_LABELS
from workloads.choices import FRAMEWORKS, LANGUAGES, SOFTWARE_COMPONENTS
from workloads.validators import component_display

IGNORED = {"created", "updated", "current_count"}
VOCABULARIES = {"frameworks": FRAMEWORKS, "software": SOFTWARE_COMPONENTS}


@dataclass
class FieldChange:
    field: str
    label: str
    old: str = ""
    new: str = ""
    items: list[tuple[str, str]] = field(default_factory=list)  # ("added" | "removed" | "changed", text)

    def text(self) -> str:
        if self.items:
            return f"{self.label}: " + "; ".join(f"{'+' if k == 'added' else '-' if k == 'removed' else '~'} {t}"
                                                  for k, t in self.items)
        return f"{self.label}: {self.old or '—'} → {self.new or '—'}"


@dataclass
class HistoryEntry:
    when: datetime
    who: str
    action: str  # "created", "changed", "deleted"
    changes: list[FieldChange]


def _user_names(ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return {u.pk: u.display_name for u in get_user_model().objects.filter(pk__in=ids)}


def _display(model, name: str, value, users: dict[int, str]) -> str:
    if value is None or value == "":
        return ""
    f = model._meta.get_field(name)
    if f.is_relation:
        if f.related_model is get_user_model():
            return users.get(value, f"user #{value}")
        if f.name == "cycle":  # a quota or reservation carried into the next cycle: the cycles' names
            return str(f.related_model._default_manager.filter(pk=value).first() or f"#{value}")
        return f"#{value}"
    if f.choices:
        return str(dict(f.flatchoices).get(value, value))
    return display_value(value)


def display_value(value) -> str:
    """Times in the program's display time zone, to the minute, like every page (never an ISO string with
    microseconds); dates as YYYY-MM-DD."""
    if isinstance(value, datetime):
        return (timezone.localtime(value) if timezone.is_aware(value) else value).strftime("%Y-%m-%d %H:%M")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _list_items(name: str, old, new) -> list[tuple[str, str]]:
    old, new = old or [], new or []
    if name == "target_languages":
        return ([("removed", LANGUAGES.get(c, c)) for c in old if c not in new]
                + [("added", LANGUAGES.get(c, c)) for c in new if c not in old])
    vocabulary = VOCABULARIES[name]

    def key(item):
        return (item.get("name"), (item.get("label") or "").lower())

    before = {key(i): i for i in old if isinstance(i, dict)}
    after = {key(i): i for i in new if isinstance(i, dict)}
    items = []
    for k, item in before.items():
        if k not in after:
            items.append(("removed", component_display(item, vocabulary)))
        elif (item.get("version") or "") != (after[k].get("version") or ""):
            shown = component_display({**item, "version": ""}, vocabulary)
            items.append(("changed", f"{shown} {item.get('version') or '—'} → {after[k].get('version') or '—'}"))
    items += [("added", component_display(i, vocabulary)) for k, i in after.items() if k not in before]
    return items


def _changes(model, record, previous, users) -> list[FieldChange]:
    delta = record.diff_against(previous, excluded_fields=IGNORED)
    out = []
    for change in delta.changes:
        label = str(FIELD_LABELS.get(change.field) or str(model._meta.get_field(change.field).verbose_name).capitalize())
        if change.field in VOCABULARIES or change.field == "target_languages":
            items = _list_items(change.field, change.old, change.new)
            if items:
                out.append(FieldChange(change.field, label, items=items))
            continue
        out.append(FieldChange(change.field, label, _display(model, change.field, change.old, users),
                               _display(model, change.field, change.new, users)))
    return out


def user_ids_in(records) -> set[int]:
    ids = set()
    for r in records:
        for name in ("lead_sa_id", "requested_by_id", "decided_by_id"):
            value = getattr(r, name, None)
            if value:
                ids.add(value)
    return ids


def entries(model, records) -> list[HistoryEntry]:
    """Turn historical records (any order, ``history_user`` selected) into entries, newest first."""
    records = sorted(records, key=lambda r: (r.history_date, r.history_id))
    users = _user_names(user_ids_in(records))
    previous_by_object: dict = {}
    result = []
    for record in records:
        previous = previous_by_object.get(record.id)
        action = {"+": "created", "~": "changed", "-": "deleted"}[record.history_type]
        changes = _changes(model, record, previous, users) if previous is not None and action == "changed" else []
        who = record.history_user.display_name if record.history_user_id else "the system"
        if action != "changed" or changes:
            result.append(HistoryEntry(record.history_date, who, action, changes))
        previous_by_object[record.id] = record
    result.reverse()
    return result


def describe(model, record) -> list[FieldChange]:
    """The changes one new historical record made (one query for the previous record)."""
    previous = record.prev_record
    if previous is None:
        return []
    return _changes(model, record, previous, _user_names(user_ids_in([record, previous])))
