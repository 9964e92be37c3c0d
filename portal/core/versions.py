"""Optimistic concurrency for edits: a save is checked against the version of the row it was read at.

Two people who open the same edit form and both save would otherwise both succeed, and the second would
silently write back the first one's fields as they were. Every edit form and every API update therefore
carries the version it was read at, and the save compares it with the stored row inside the saving
transaction, after locking that row (``SELECT … FOR UPDATE``): of two saves made from the same version
exactly one passes, the other is refused with what changed meanwhile.

The version is a digest of the stored values of the fields the writer edits (the form's model fields, the
serializer's writable ones), not a column: no migration on any model, and a row changed only where the
writer does not write (a comment bumping ``last_activity_at``, a Support sync, a token rotation) does not
refuse an edit that would not overwrite it. The digest is an HMAC under the project's secret, so an
``ETag`` says nothing about values its reader may not see. Pages also carry the values as read (signed,
never trusted for the check) so a refused save can show, field by field, what was read, what is stored
now and what the user sent. Password fields are in the digest, never in the page's token.

A write that carries no version (an API client without ``If-Match``, a form rendered before this existed)
is accepted as before; see docs/DECISIONS.md.
"""
from __future__ import annotations

import datetime
import json
from dataclasses import dataclass

from django import forms
from django.core import signing
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone
from django.utils.crypto import salted_hmac

FIELD = "_version"  # the hidden field every edit form carries
_SALT = "portal.core.versions"


# --- the version of a row --------------------------------------------------------------------------------

def model_fields(model, names) -> list:
    """The model fields among ``names`` (form or serializer field names), in their order."""
    by_name = {}
    for f in model._meta.get_fields():
        if (f.concrete or f.many_to_many) and not f.auto_created and not getattr(f, "primary_key", False):
            by_name[f.name] = f
    return [by_name[name] for name in names if name in by_name]


def values(obj, fields) -> dict:
    """The stored values of ``fields`` as plain JSON values (keys of relations, sorted keys of sets)."""
    out = {}
    for f in fields:
        if f.many_to_many:
            out[f.name] = sorted(o.pk for o in f.value_from_object(obj)) if obj.pk else []
        else:
            out[f.name] = _plain(f.value_from_object(obj))
    return out


def _plain(value):
    if isinstance(value, datetime.datetime) and timezone.is_aware(value):
        value = value.astimezone(datetime.UTC)  # one instant, one spelling, whatever zone it was read in
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder, default=str))


def digest(vals: dict) -> str:
    payload = json.dumps(vals, sort_keys=True, cls=DjangoJSONEncoder, default=str)
    return salted_hmac(_SALT, payload, algorithm="sha256").hexdigest()[:32]


def lock(obj):
    """Lock ``obj``'s row until the transaction ends and return it as stored now (a fresh instance)."""
    manager = type(obj)._base_manager
    manager.select_for_update().filter(pk=obj.pk).values_list("pk", flat=True).get()
    return manager.get(pk=obj.pk)


# --- pages -----------------------------------------------------------------------------------------------

def form_fields(form) -> list:
    names = [name for name in form.fields if name != FIELD]
    return model_fields(form._meta.model, names)


def _secret_names(form) -> set[str]:
    return {name for name, field in form.fields.items() if isinstance(field.widget, forms.PasswordInput)}


def page_token(form, obj) -> str:
    """The hidden field's value for ``form`` editing ``obj`` as stored: its digest and its readable values."""
    fields = form_fields(form)
    vals = values(obj, fields)
    secret = _secret_names(form)
    shown = {k: v for k, v in vals.items() if k not in secret}
    return signing.Signer(salt=_SALT).sign_object({"d": digest(vals), "v": shown}, compress=True)


def add_field(form, obj) -> None:
    """Give ``form`` (editing the stored ``obj``) its hidden version field, set to ``obj``'s version."""
    if obj is None or obj.pk is None or FIELD in form.fields:
        return
    # A bound form posts back the version it was read at; only a form being shown needs the current one.
    form.fields[FIELD] = forms.CharField(widget=forms.HiddenInput, required=False,
                                         initial="" if form.is_bound else page_token(form, obj))


def _read(token: str) -> tuple[str | None, dict]:
    try:
        data = signing.Signer(salt=_SALT).unsign_object(token)
    except signing.BadSignature:
        return None, {}
    return data.get("d"), data.get("v") or {}


@dataclass
class Change:
    name: str
    label: str
    read: str     # as the user's form was filled
    current: str  # stored now (the other save)
    yours: str    # what the user sent
    yours_differs: bool  # saving yours would change the stored value


def conflict(form, obj) -> list[Change] | None:
    """Inside the saving transaction: lock ``obj``'s row and compare it with the version ``form`` was read at.

    None: no version sent, or the stored row is still that version (the save may go on, the row stays
    locked until the transaction ends). Otherwise the fields changed meanwhile (all the fields where
    yours and the stored value differ when the token is unreadable); the caller refuses the save.
    """
    token = form.data.get(form.add_prefix(FIELD)) if form.is_bound else None
    if not token or obj is None or obj.pk is None:
        return None
    fields = form_fields(form)
    stored = lock(obj)
    current = values(stored, fields)
    read_digest, read = _read(token)
    if read_digest == digest(current):
        return None
    form.current_instance = stored
    yours = values(form.instance, [f for f in fields if not f.many_to_many])
    yours.update({f.name: sorted(o.pk for o in form.cleaned_data.get(f.name) or [])
                  for f in fields if f.many_to_many})
    secret = _secret_names(form)
    changes = []
    for f in fields:
        name = f.name
        meanwhile = name in read and read[name] != current[name]
        if not meanwhile and (read_digest is not None or current[name] == yours[name]):
            continue
        field = form.fields[name]
        show = (lambda v: "(hidden)") if name in secret else (lambda v, fl=field: _display(fl, v))
        changes.append(Change(name=name, label=str(field.label or name), read=show(read.get(name)) if name in read
                              else "", current=show(current[name]), yours=show(yours[name]),
                              yours_differs=current[name] != yours[name]))
    return changes or [Change(name="", label="(another field)", read="", current="", yours="", yours_differs=False)]


def _display(field, value) -> str:
    if value in (None, "", [], {}):
        return "—"
    if isinstance(field, forms.ModelChoiceField):
        keys = value if isinstance(value, list) else [value]
        found = {o.pk: field.label_from_instance(o) for o in field.queryset.model._base_manager.filter(pk__in=keys)}
        return ", ".join(found.get(k, f"#{k}") for k in keys)
    choices = getattr(field, "choices", None)
    if choices:
        labels = {}
        for key, label in choices:
            if isinstance(label, list | tuple):
                labels.update({str(k): str(lbl) for k, lbl in label})
            else:
                labels[str(key)] = str(label)
        keys = value if isinstance(value, list) else [value]
        return ", ".join(labels.get(str(k), str(k)) for k in keys)
    if isinstance(field, forms.BooleanField):
        return "yes" if value else "no"
    if isinstance(field, forms.DateTimeField) and isinstance(value, str):
        value = timezone.localtime(datetime.datetime.fromisoformat(value))
        return value.strftime("%Y-%m-%d %H:%M")
    shown = field.prepare_value(value)
    if isinstance(shown, list | tuple):
        return "; ".join(str(v) for v in shown)
    if isinstance(shown, dict):
        return json.dumps(shown, sort_keys=True)
    return str(shown)


def reapply_data(form, stored) -> dict:
    """The user's posted values with the version of ``stored``: the re-apply form's data."""
    data = form.data.copy()
    data[form.add_prefix(FIELD)] = page_token(form, stored)
    return data


# --- a set of rows saved together (one organization's milestones) -------------------------------------------

class Stale(Exception):
    """The values were changed since ``read`` (``current`` is what is stored now)."""

    def __init__(self, read: dict, current: dict):
        super().__init__("changed since it was read")
        self.read, self.current = read, current


def values_token(vals: dict) -> str:
    """A page token for values that are not one row's fields (plain JSON values)."""
    return signing.Signer(salt=_SALT).sign_object({"d": digest(vals), "v": vals}, compress=True)


def add_token_field(form, token: str) -> None:
    form.fields[FIELD] = forms.CharField(widget=forms.HiddenInput, required=False, initial=token)


def require(token: str | None, current: dict) -> None:
    """Inside the transaction holding the lock: raise :class:`Stale` when ``token`` is not the version of
    ``current``; no token, no check."""
    if not token:
        return
    read_digest, read = _read(token)
    if read_digest != digest(current):
        raise Stale(read, current)


# --- the API ---------------------------------------------------------------------------------------------

def serializer_fields(serializer, model) -> list:
    """The model fields a serializer writes (writable fields whose source is a model field)."""
    names = [f.source for f in serializer.fields.values()
             if not f.read_only and f.source != "*" and "." not in f.source]
    return model_fields(model, names)


def etag(obj, fields) -> str:
    return f'"{digest(values(obj, fields))}"'


def if_match_holds(header: str | None, current: str) -> bool:
    """RFC 9110 If-Match: absent, ``*`` or a strong tag equal to ``current`` (a weak tag never matches)."""
    if header is None or header.strip() == "*":
        return True
    tags = [t.strip() for t in header.split(",") if t.strip()]
    return current in tags
