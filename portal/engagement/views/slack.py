"""Endpoints Slack calls: the message shortcut (interactivity) and the slash command.

Not behind the sign-in (Slack is the caller) and exempt from CSRF (Slack cannot send a token): each request
is verified with the signing secret and timestamp instead, and refused with 403 before anything is read
when the signature does not match.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.db import transaction
from django.http import HttpResponse, HttpResponseForbidden, JsonResponse
from django.http.request import RawPostDataException
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from portal.core import slack_markup
from portal.engagement import slack, tasks


def _signed(request) -> bool:
    """Slack signs the raw form-encoded body. A body already consumed as multipart (never what Slack sends)
    cannot be checked, so it is refused like a bad signature."""
    try:
        body = request.body
    except RawPostDataException:
        return False
    return slack.verified(body, request.headers)


def _ephemeral(text: str) -> JsonResponse:
    """The slash command's answer: names in it are users' words, escaped so they are never Slack markup."""
    return JsonResponse({"response_type": "ephemeral", "text": slack_markup.escape(text)})


@csrf_exempt
@login_not_required
@require_POST
def interactivity(request):
    """Slack's interactivity endpoint: the "Log in the portal" message shortcut. Slack wants its 200 within 3 s,
    so the request only verifies, maps the user and channel and stores the capture; the
    ``engagement.capture_thread`` task reads the thread, logs it and tells the user (an ephemeral message)."""
    if not _signed(request):
        return HttpResponseForbidden("Invalid Slack signature.")
    try:
        payload = slack.parse_payload(request.POST)
    except slack.SlackRefused as exc:
        return HttpResponse(str(exc), status=400)
    if payload.get("type") != "message_action" or payload.get("callback_id") != slack.SHORTCUT_CALLBACK:
        return HttpResponse(status=204)
    with transaction.atomic():
        capture, send = slack.request_capture(payload)
        if send:
            tasks.send_capture(capture.pk)
    return HttpResponse(status=200)


@csrf_exempt
@login_not_required
@require_POST
def command(request):
    """Slack's slash command endpoint: an organization's status, for its members only. A signed request replayed
    within its window is refused (Slack itself never sends a slash command twice)."""
    if not _signed(request):
        return HttpResponseForbidden("Invalid Slack signature.")
    if not slack.first_use(request.headers):
        return HttpResponseForbidden("This Slack request was already received.")
    try:
        return _ephemeral(slack.command(request.POST))
    except slack.SlackRefused as exc:
        return _ephemeral(str(exc))
