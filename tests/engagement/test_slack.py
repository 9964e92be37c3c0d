"""The Slack bridge, tested with requests signed locally (the app's signing secret) against the real
endpoints, and a local HTTP server standing in for Slack's Web API."""
from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from slack_sdk.signature import SignatureVerifier

from portal.core.models import NotificationDelivery
from portal.engagement.models import SlackCapture, SlackThread
from portal.engagement.tasks import CAPTURE_RETRIES, capture_thread, sweep_captures
from tests.engagement.conftest import SECRET, TEAM
from tests.faults.test_broker_down import private_redis  # noqa: F401 - fixture
from workloads.interactions.models import Interaction

pytestmark = pytest.mark.django_db


def _signed(client, url, body: str, secret: str = SECRET, timestamp: int | None = None):
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return client.generic("POST", url, body, content_type="application/x-www-form-urlencoded",
                          HTTP_X_SLACK_REQUEST_TIMESTAMP=ts, HTTP_X_SLACK_SIGNATURE=signature)


def _response_url() -> str:
    """Where the local stand-in takes the shortcut's answer (the slack_api fixture points the setting at it)."""
    from django.conf import settings

    return f"{settings.SLACK_RESPONSE_URL_PREFIX}{TEAM}/1/hook"


def _shortcut(user="U0LEAD", channel="C0ALPHA", ts="1764000000.000100", thread_ts=None, response_url=None) -> str:
    message = {"type": "message", "user": user, "ts": ts, "text": "NCCL falls back to sockets on 4 nodes"}
    if thread_ts:
        message["thread_ts"] = thread_ts
    payload = {"type": "message_action", "callback_id": "log_interaction", "team": {"id": TEAM},
               "user": {"id": user}, "channel": {"id": channel}, "message": message,
               "response_url": _response_url() if response_url is None else response_url}
    return urlencode({"payload": json.dumps(payload)})


def _use_shortcut(client, capture_callbacks, **kwargs):
    """The shortcut against the real endpoint; answers the response and the capture it stored. The capture's
    task is sent after commit (to the broker: ``capture_thread.apply`` below runs what the worker would)."""
    with capture_callbacks(execute=False) as callbacks:
        response = _signed(client, reverse("engagement:slack_interactivity"), _shortcut(**kwargs))
    assert response.status_code == 200 and len(callbacks) == 1
    return SlackCapture.objects.order_by("-pk").first()


def test_message_shortcut_answers_at_once_and_the_task_logs_the_thread(
        client, world, linked, slack_api, django_capture_on_commit_callbacks):
    capture = _use_shortcut(client, django_capture_on_commit_callbacks, ts="1764000060.000200",
                            thread_ts="1764000000.000100")
    # The request called no Slack method and logged nothing yet: a pending capture.
    assert slack_api.calls == [] and not Interaction.objects.exists()
    assert (capture.status, capture.user, capture.link, capture.thread_ts) == (
        "pending", world.lead_a, linked, "1764000000.000100")
    assert capture_thread.apply(args=[capture.pk]).get() == "done"
    interaction = Interaction.objects.get()
    assert (interaction.organization, interaction.kind, interaction.created_by) == (world.org_a, "chat", world.lead_a)
    assert interaction.summary == "NCCL falls back to sockets on 4 nodes"
    assert "FI_PROVIDER is unset" in interaction.body and "<@U0CUST>" in interaction.body
    thread = SlackThread.objects.get()
    assert thread.thread_ts == "1764000000.000100"
    assert thread.permalink == "https://geniac.slack.com/archives/C0ALPHA/p1764000000000100"
    capture.refresh_from_db()
    assert (capture.status, capture.interaction, capture.attempts) == ("done", interaction, 1)
    methods = [c[0] for c in slack_api.calls]
    assert methods == ["chat.getPermalink", "conversations.replies", "response_url"]
    assert [c[2] for c in slack_api.calls] == ["Bearer xoxb-test-token"] * 2 + [None]  # the response_url needs none
    assert "Logged as an interaction" in slack_api.calls[-1][1]["text"]
    assert slack_api.calls[-1][1]["response_type"] == "ephemeral"
    # The interaction carries its thread link, on the page and in the API.
    client.force_login(world.lead_a)
    assert thread.permalink in client.get(interaction.get_absolute_url()).content.decode()
    api = client.get(reverse("interactions-api:interaction-detail", args=[interaction.pk])).json()
    assert api["slack_thread_url"] == thread.permalink
    client.logout()
    # The same message again (a retried shortcut): the same capture, no second interaction.
    again = _use_shortcut(client, django_capture_on_commit_callbacks, ts="1764000060.000200",
                          thread_ts="1764000000.000100")
    assert again == capture and capture_thread.apply(args=[again.pk]).get() == "done"
    assert Interaction.objects.count() == 1 and "already logged" in slack_api.calls[-1][1]["text"]
    # Another message of the same thread: its own capture, linked to the thread's interaction.
    other = _use_shortcut(client, django_capture_on_commit_callbacks)
    assert other != capture and capture_thread.apply(args=[other.pk]).get() == "done"
    other.refresh_from_db()
    assert other.interaction == interaction and Interaction.objects.count() == 1
    assert "already logged" in slack_api.calls[-1][1]["text"]


def test_the_task_retries_on_rate_limits_and_records_a_refusal(
        client, world, linked, slack_api, django_capture_on_commit_callbacks):
    limited = (429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
    slack_api.script = {"conversations.replies": [limited, limited]}
    capture = _use_shortcut(client, django_capture_on_commit_callbacks)
    assert capture_thread.apply(args=[capture.pk]).get() == "done"
    capture.refresh_from_db()
    assert capture.attempts == 3 and Interaction.objects.count() == 1
    assert [c[0] for c in slack_api.calls].count("conversations.replies") == 3

    slack_api.calls.clear()
    slack_api.script = {"chat.getPermalink": [(200, {"ok": False, "error": "channel_not_found"}, {})]}
    refused = _use_shortcut(client, django_capture_on_commit_callbacks, ts="1764000500.000100")
    assert capture_thread.apply(args=[refused.pk]).get() == "failed"
    refused.refresh_from_db()
    assert refused.status == "failed" and refused.attempts == 1 and "channel_not_found" in refused.error
    assert Interaction.objects.count() == 1
    assert [c[0] for c in slack_api.calls] == ["chat.getPermalink", "response_url"]
    assert "Nothing was logged" in slack_api.calls[-1][1]["text"] and "channel_not_found" in slack_api.calls[-1][1]["text"]
    # A failed capture does not block using the shortcut again on the message.
    slack_api.calls.clear()
    retried = _use_shortcut(client, django_capture_on_commit_callbacks, ts="1764000500.000100")
    assert retried != refused and capture_thread.apply(args=[retried.pk]).get() == "done"
    assert Interaction.objects.count() == 2


def test_slack_unreachable_is_retried_then_recorded(client, world, linked, slack_api, settings,
                                                    django_capture_on_commit_callbacks):
    capture = _use_shortcut(client, django_capture_on_commit_callbacks)
    settings.SLACK_API_URL = "http://127.0.0.1:9/api/"  # nothing listens on the discard port
    assert capture_thread.apply(args=[capture.pk]).get() == "failed"
    capture.refresh_from_db()
    assert capture.status == "failed" and capture.attempts == CAPTURE_RETRIES + 1
    assert "could not be reached" in capture.error and not Interaction.objects.exists()


def test_a_shortcut_the_broker_missed_is_sent_by_the_sweep(client, world, linked, slack_api, private_redis,  # noqa: F811 - fixture
                                                           django_capture_on_commit_callbacks):
    import redis as redis_lib

    from portal.celery import app

    private_redis.stop()
    app._pool = None
    app.amqp._producer_pool = None  # a pool made by an earlier test would still reach the machine's Redis
    with django_capture_on_commit_callbacks(execute=True):
        response = _signed(client, reverse("engagement:slack_interactivity"), _shortcut())
    assert response.status_code == 200
    capture = SlackCapture.objects.get()
    assert capture.status == "pending" and capture.dispatched_at is None  # kept, not lost
    assert sweep_captures() == 0 and SlackCapture.objects.get().dispatched_at is None
    private_redis.start()
    app._pool = None
    app.amqp._producer_pool = None
    assert sweep_captures() == 1
    assert redis_lib.Redis.from_url(private_redis.url).llen("default") == 1
    assert sweep_captures() == 0  # claimed once
    assert capture_thread.apply(args=[capture.pk]).get() == "done" and Interaction.objects.count() == 1


@pytest.mark.parametrize("case", ["bad_secret", "stale", "unsigned", "tampered"])
def test_unsigned_or_badly_signed_requests_are_refused(client, world, linked, slack_api, case):
    url = reverse("engagement:slack_interactivity")
    body = _shortcut()
    if case == "bad_secret":
        response = _signed(client, url, body, secret="not-the-secret")
    elif case == "stale":
        response = _signed(client, url, body, timestamp=int(time.time()) - 600)
    elif case == "unsigned":
        response = client.post(url, body, content_type="application/x-www-form-urlencoded")
    else:
        ts = str(int(time.time()))
        signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
        response = client.generic("POST", url, body.replace("C0ALPHA", "C0OTHER"),
                                  content_type="application/x-www-form-urlencoded",
                                  HTTP_X_SLACK_REQUEST_TIMESTAMP=ts, HTTP_X_SLACK_SIGNATURE=signature)
    assert response.status_code == 403
    command = _signed(client, reverse("engagement:slack_command"), urlencode({"team_id": TEAM, "user_id": "U0LEAD"}),
                      secret="wrong") if case == "bad_secret" else None
    assert command is None or command.status_code == 403
    assert not Interaction.objects.exists() and slack_api.calls == []


def test_no_signing_secret_refuses_everything(client, world, linked, slack_api, settings):
    settings.SLACK_SIGNING_SECRET = ""
    assert _signed(client, reverse("engagement:slack_interactivity"), _shortcut()).status_code == 403


def test_shortcut_needs_a_mapped_user_a_linked_channel_and_the_right_to_log(
        client, world, linked, slack_api, django_capture_on_commit_callbacks):
    for user, channel, expected in (
        ("U0NOBODY", "C0ALPHA", "not linked to a portal account"),
        ("U0LEAD", "C0UNLINKED", "not linked to an organization"),
        ("U0CUST", "C0ALPHA", "may not log interactions"),
        ("U0BETA", "C0ALPHA", "may not log interactions"),
    ):
        capture = _use_shortcut(client, django_capture_on_commit_callbacks, user=user, channel=channel)
        assert capture.status == "refused" and expected in capture.error, (user, channel)
        assert capture_thread.apply(args=[capture.pk]).get() == "refused"
        assert expected in slack_api.calls[-1][1]["text"], (user, channel)
        assert slack_api.calls[-1][1]["response_type"] == "ephemeral"
    assert not Interaction.objects.exists()
    assert {c[0] for c in slack_api.calls} == {"response_url"}
    # A response_url that is not Slack's is not called: the answer goes through chat.postEphemeral.
    slack_api.calls.clear()
    capture = _use_shortcut(client, django_capture_on_commit_callbacks, user="U0NOBODY",
                            response_url="http://127.0.0.1:9/elsewhere")
    assert capture.response_url == "" and capture_thread.apply(args=[capture.pk]).get() == "refused"
    assert [c[0] for c in slack_api.calls] == ["chat.postEphemeral"] and slack_api.calls[0][1]["user"] == "U0NOBODY"


def test_slash_command_shows_status_to_members_only(client, world, linked, slack_api):
    from tests.clusters.factories_clusters import ready_cluster
    from tests.interactions.factories_interactions import InteractionFactory

    ready_cluster(world.org_a, name="alpha-p5")
    InteractionFactory(organization=world.org_a, visibility="shared")
    InteractionFactory(organization=world.org_a, visibility="internal")
    url = reverse("engagement:slack_command")
    form = {"team_id": TEAM, "command": "/geniac", "channel_id": "C0ALPHA"}
    lead = _signed(client, url, urlencode({**form, "user_id": "U0LEAD", "text": ""})).json()
    assert lead["response_type"] == "ephemeral" and world.org_a.name in lead["text"]
    assert "Clusters: 1 ready" in lead["text"] and "Open interactions: 2" in lead["text"]
    customer = _signed(client, url, urlencode({**form, "user_id": "U0CUST", "text": "alpha-labs"})).json()
    assert "Open interactions: 1" in customer["text"]  # internal ones are not counted for customers
    beta = _signed(client, url, urlencode({**form, "user_id": "U0BETA", "text": "alpha-labs"})).json()
    assert world.org_a.name not in beta["text"] and "No organization of yours" in beta["text"]
    beta_in_channel = _signed(client, url, urlencode({**form, "user_id": "U0BETA", "text": ""})).json()
    assert "No organization of yours" in beta_in_channel["text"]
    unmapped = _signed(client, url, urlencode({**form, "user_id": "U0NOBODY", "text": "alpha-labs"})).json()
    assert "not linked" in unmapped["text"] and world.org_a.name not in unmapped["text"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_logs_the_thread_through_a_rate_limit_and_replies_in_it(request, monkeypatch, client, world,
                                                                             linked, slack_api):
    """A real worker takes the capture (waiting out Slack's Retry-After), then the replies: an internal event
    stays out of the customer channel's thread, a shared one is posted in it."""
    from django.conf import settings

    from portal.core.notifications import Event, notify

    monkeypatch.setenv("SLACK_API_URL", settings.SLACK_API_URL)  # the worker process reads its settings from here
    monkeypatch.setenv("SLACK_BOT_TOKEN", settings.SLACK_BOT_TOKEN)
    monkeypatch.setenv("SLACK_RESPONSE_URL_PREFIX", settings.SLACK_RESPONSE_URL_PREFIX)
    request.getfixturevalue("celery_worker_process")
    slack_api.script = {"chat.getPermalink": [(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})]}
    assert _signed(client, reverse("engagement:slack_interactivity"), _shortcut()).status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and SlackCapture.objects.get().status == "pending":
        time.sleep(0.2)
    capture = SlackCapture.objects.get()
    assert (capture.status, capture.attempts) == ("done", 2), capture.error
    interaction = Interaction.objects.get()
    assert capture.interaction == interaction
    assert [c[0] for c in slack_api.calls] == ["chat.getPermalink", "chat.getPermalink", "conversations.replies",
                                               "response_url"]
    slack_api.calls.clear()
    notify(Event(kind="interaction.escalated", title="Escalated internally", visibility="internal",
                 organization_id=world.org_a.pk, extra={"interaction": interaction.pk}))
    notify(Event(kind="interaction.status", title="Support case is now resolved", visibility="shared",
                 organization_id=world.org_a.pk, extra={"interaction": interaction.pk}))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not NotificationDelivery.objects.filter(status="sent").exists():
        time.sleep(0.2)
    assert list(NotificationDelivery.objects.values_list("channel", "title", "status")) == [
        ("thread", "Support case is now resolved", "sent")]  # the internal event made no delivery at all
    (post,) = [c for c in slack_api.calls if c[0] == "chat.postMessage"]
    args = post[1]
    assert (args["channel"], args["thread_ts"]) == ("C0ALPHA", "1764000000.000100")
    assert args["text"].startswith("Support case is now resolved") and post[2] == "Bearer xoxb-test-token"


@pytest.mark.django_db(transaction=True)
def test_a_shortcut_sent_four_times_at_once_stores_one_capture(world, linked, slack_api):
    """A double click (or Slack's retry) arriving together: every request is answered, one capture is live."""
    from django.db import connection
    from django.test import Client

    from tests.concurrency import race

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time (CI runs this on PostgreSQL)")
    body = _shortcut(ts="1764000120.000300")
    clients = [Client() for _ in range(4)]
    url = reverse("engagement:slack_interactivity")
    results = race(4, lambda i: _signed(clients[i], url, body).status_code)
    assert results == [200] * 4, results
    assert SlackCapture.objects.filter(message_ts="1764000120.000300").count() == 1
    assert slack_api.calls == []  # the requests called no Slack method
