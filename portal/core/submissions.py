"""One submission, one row: the form's hidden submission key and the API's ``Idempotency-Key``, for every create.

A double click, a browser resending a POST, a client retrying after a timeout, or twenty copies released at once
must write what one request writes. Each rendered form carries a fresh key (``{% submission_key form %}``, beside
``{% csrf_token %}``); an API client sends ``Idempotency-Key``. A key belongs to one user and one route (the
method and path), and is honoured for ``SUBMISSION_KEY_TTL_HOURS`` (24 h by default; the hourly
``portal.expire_submissions`` forgets older ones).

How one row is guaranteed: the first thing the request's transaction does is insert the key (a ``Submission``)
under a unique constraint, before any check or write of the view. A concurrent copy's insert waits on that
unique index until the first commits, then fails; it then reads the first's answer and replays it (pages: a
redirect to what was made; the API: the first status and body). A request that makes nothing (invalid form, a
refusal) does not keep its key, so the corrected form, sent again with the same key, works.

Pages: decorate the POST handler with :func:`once` and call :func:`record` with the row the request made (the
base ``ObjectEditView`` does both for its create path). The API: decorate the handler with :func:`idempotent`
(the base viewsets' ``create`` has it); a key reused with another body is 409. A request without a key behaves
as it always did (one row per POST): scripts, old tabs and tests that send none still work; the portal's own
forms always send one.
"""
from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.contenttypes.models import ContentType
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from portal.core.models import Submission

FIELD = "submission_key"
HEADER = "Idempotency-Key"
KEY = re.compile(r"[\x21-\x7e]{1,128}")  # visible ASCII; the forms' keys are 32 hex digits
REPEATED = gettext_lazy("This was already submitted; here is what the first submission saved.")
OTHER_BODY = ("This Idempotency-Key was already used for a request with a different body; "
              "send a new key for a new request.")


def new_key() -> str:
    return uuid.uuid4().hex


def ttl() -> timedelta:
    return timedelta(hours=settings.SUBMISSION_KEY_TTL_HOURS)


def expire() -> int:
    """Forget keys older than the time they are honoured for; answers how many."""
    return Submission.objects.filter(created__lt=timezone.now() - ttl()).delete()[0]


@dataclass
class Claim:
    """The key this request holds while it runs, and what the view says it made."""

    row: Submission
    made: object | None = None
    location: str = ""
    recorded: bool = False


def record(request, obj=None, location: str = "") -> None:
    """The view made ``obj`` (a repeat lands on ``location``, else the answer's redirect, else the object's page).
    Does nothing for a request without a key."""
    claim: Claim | None = getattr(request, "_submission_claim", None)
    if claim is not None:
        claim.made, claim.location, claim.recorded = obj, location, True


def _identity(request, key: str) -> dict:
    return {"user": request.user, "scope": f"{request.method} {request.path}"[:255], "key": key}


def _earlier(identity: dict) -> Submission | None:
    """A finished, unexpired submission with this key (one query, before any validation)."""
    return (Submission.objects.filter(**identity, status_code__gt=0, created__gte=timezone.now() - ttl())
            .select_related("content_type").first())


def _claim(identity: dict, fingerprint: str) -> tuple[Submission, bool]:
    """Hold the key for this request (``True``), or answer the submission that holds it (``False``).

    The insert waits while a concurrent request holding the same key runs, and fails once it commits. A row
    left expired, or unfinished by a request that crashed outside a transaction, is taken over."""
    for _ in range(3):
        try:
            with transaction.atomic():
                return Submission.objects.create(**identity, fingerprint=fingerprint), True
        except IntegrityError:
            row = Submission.objects.select_for_update().filter(**identity).first()
        if row is None:  # forgotten by the sweep meanwhile: try again
            continue
        if row.status_code and row.created >= timezone.now() - ttl():
            return row, False
        row.fingerprint, row.created, row.status_code, row.location, row.body = fingerprint, timezone.now(), 0, "", None
        row.content_type, row.object_id = None, None
        row.save()
        return row, True
    raise IntegrityError("The submission key could not be claimed.")


def _finish(row: Submission, status: int, location: str = "", made=None, body=None) -> None:
    row.status_code, row.location, row.body = status, location[:500], body
    if made is not None and getattr(made, "pk", None) is not None:
        row.content_type, row.object_id = ContentType.objects.get_for_model(type(made)), made.pk
    row.save(update_fields=["status_code", "location", "body", "content_type", "object_id"])


def _page_key(request) -> str:
    key = request.POST.get(FIELD, "") if request.method == "POST" else ""
    return key if key and KEY.fullmatch(key) and request.user.is_authenticated else ""


def _redirect_of(response) -> str:
    if 300 <= response.status_code < 400 and response.get("Location"):
        return response["Location"]
    return response.get("HX-Location", "")


def replay_page(request, earlier: Submission) -> HttpResponse:
    """The default answer to a repeat: to the page the first submission led to, saying so."""
    location = earlier.location
    if not location and earlier.made is not None and hasattr(earlier.made, "get_absolute_url"):
        location = earlier.made.get_absolute_url()
    messages.info(request, REPEATED)
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Location"] = location or "/"
        return response
    return redirect(location or "/")


def once(view):
    """A page's POST handler (a function view or a method): one row per submission key.

    The view runs inside one transaction that holds the key; it calls :func:`record` with what it made. An
    error answer (4xx, 5xx) keeps nothing (the view's writes roll back with the key); a view that made nothing
    and answered otherwise (a redirect with an error message) keeps its other writes and frees the key. A class
    view may define ``replay_submission(request, earlier)`` for a repeat that should answer otherwise than a
    redirect (an htmx partial)."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        owner, request = (None, args[0]) if isinstance(args[0], HttpRequest) else (args[0], args[1])
        key = _page_key(request)
        if not key:
            return view(*args, **kwargs)
        identity = _identity(request, key)
        replay = getattr(owner, "replay_submission", None) or replay_page
        earlier = _earlier(identity)
        if earlier is not None:
            return replay(request, earlier)
        with transaction.atomic():
            row, ours = _claim(identity, "")
            if not ours:
                return replay(request, row)
            claim = request._submission_claim = Claim(row)
            try:
                response = view(*args, **kwargs)
            finally:
                del request._submission_claim
            if response.status_code >= 400:  # refused or invalid: nothing of it stays, the key is free again
                transaction.set_rollback(True)
            elif claim.recorded:
                location = claim.location or _redirect_of(response)
                if not location and hasattr(claim.made, "get_absolute_url"):
                    location = claim.made.get_absolute_url()
                _finish(row, response.status_code, location, claim.made)
            else:  # answered without making anything (an error shown on the page it redirects to)
                row.delete()
        return response

    return wrapper


def fingerprint(request) -> str:
    """A hash of the API request's body as parsed (files by their content), to tell a repeat from a new request."""
    data = request.data
    if hasattr(data, "lists"):
        data = sorted((name, [_value(v) for v in values]) for name, values in data.lists())
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _value(value):
    if hasattr(value, "chunks"):
        digest = hashlib.sha256()
        for chunk in value.chunks():
            digest.update(chunk)
        value.seek(0)
        return f"file:{value.name}:{digest.hexdigest()}"
    return value


def idempotent(handler):
    """An API POST handler (``create`` or an action) that honours ``Idempotency-Key``.

    The first request with a key runs in one transaction that holds the key; a 2xx answer is stored and every
    repeat gets it again (status and body, with ``Idempotent-Replayed: true``); another answer (a 400) is not
    stored and its writes are rolled back, so a corrected request may use the key again. A repeat whose body
    differs from the first's is refused with 409, as the launch API refuses a key reused for another cluster."""
    @wraps(handler)
    def wrapper(self, request, *args, **kwargs):
        key = request.headers.get(HEADER, "").strip()
        if request.method != "POST" or not key or not request.user.is_authenticated:
            return handler(self, request, *args, **kwargs)
        if not KEY.fullmatch(key):
            raise ValidationError({HEADER: "1 to 128 visible ASCII characters (a UUID, say)."})
        identity, body_hash = _identity(request, key), fingerprint(request)
        earlier = _earlier(identity)
        if earlier is None:
            with transaction.atomic():
                row, ours = _claim(identity, body_hash)
                if ours:
                    response = handler(self, request, *args, **kwargs)
                    if 200 <= response.status_code < 300:
                        body = json.loads(JSONRenderer().render(response.data) or b"null")
                        _finish(row, response.status_code, response.get("Location", ""), body=body)
                    else:
                        transaction.set_rollback(True)
                    return response
                earlier = row
        if earlier.fingerprint != body_hash:
            return Response({"detail": OTHER_BODY}, status=409)
        headers = {"Idempotent-Replayed": "true"}
        if earlier.location:
            headers["Location"] = earlier.location
        return Response(earlier.body, status=earlier.status_code, headers=headers)

    wrapper.honours_idempotency_key = True  # the schema documents the header on these operations
    return wrapper
