"""The Slack bridge, tested with requests signed locally (the app's signing secret) against the real
endpoints, and a local HTTP server standing in for Slack's Web API."""
from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from slack_sdk.signature import SignatureVerifier

from portal.engagement.models import SlackThread
from tests.engagement.conftest import SECRET, TEAM
from workloads.models import Interaction

pytestmark = pytest.mark.django_db


def _signed(client, url, body: str, secret: str = SECRET, timestamp: int | None = None):
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return client.generic("POST", url, body, content_type="application/x-www-form-urlencoded",
                          HTTP_X_SLACK_REQUEST_TIMESTAMP=ts, HTTP_X_SLACK_SIGNATURE=signature)


def _shortcut(user="U0LEAD", channel="C0ALPHA", ts="1764000000.000100", thread_ts=None) -> str:
    message = {"type": "message", "user": user, "ts": ts, "text": "NCCL falls back to sockets on 4 nodes"}
    if thread_ts:
        message["thread_ts"] = thread_ts
    payload = {"type": "message_action", "callback_id": "log_interaction", "team": {"id": TEAM},
               "user": {"id": user}, "channel": {"id": channel}, "message": message,
               "response_url": "https://hooks.slack.com/app/x"}
    return urlencode({"payload": json.dumps(payload)})


def test_message_shortcut_logs_the_thread_as_an_interaction(client, world, linked, slack_api):
    url = reverse("engagement:slack_interactivity")
    response = _signed(client, url, _shortcut(ts="1764000060.000200", thread_ts="1764000000.000100"))
    assert response.status_code == 200
    interaction = Interaction.objects.get()
    assert (interaction.organization, interaction.kind, interaction.created_by) == (world.org_a, "chat", world.lead_a)
    assert interaction.summary == "NCCL falls back to sockets on 4 nodes"
    assert "FI_PROVIDER is unset" in interaction.body and "<@U0CUST>" in interaction.body
    thread = SlackThread.objects.get()
    assert thread.thread_ts == "1764000000.000100"
    assert thread.permalink == "https://geniac.slack.com/archives/C0ALPHA/p1764000000000100"
    methods = [c[0] for c in slack_api.calls]
    assert methods == ["chat.getPermalink", "conversations.replies", "chat.postEphemeral"]
    assert all(c[2] == "Bearer xoxb-test-token" for c in slack_api.calls)
    assert "Logged as an interaction" in slack_api.calls[-1][1]["text"]
    # The interaction carries its thread link, on the page and in the API.
    client.force_login(world.lead_a)
    assert thread.permalink in client.get(interaction.get_absolute_url()).content.decode()
    api = client.get(reverse("interactions-api:interaction-detail", args=[interaction.pk])).json()
    assert api["slack_thread_url"] == thread.permalink
    # The same thread again: not logged twice.
    client.logout()
    assert _signed(client, url, _shortcut()).status_code == 200
    assert Interaction.objects.count() == 1 and "already logged" in slack_api.calls[-1][1]["text"]


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


def test_shortcut_needs_a_mapped_user_a_linked_channel_and_the_right_to_log(client, world, linked, slack_api):
    url = reverse("engagement:slack_interactivity")
    for user, channel, expected in (
        ("U0NOBODY", "C0ALPHA", "not linked to a portal account"),
        ("U0LEAD", "C0UNLINKED", "not linked to an organization"),
        ("U0CUST", "C0ALPHA", "may not log interactions"),
        ("U0BETA", "C0ALPHA", "may not log interactions"),
    ):
        assert _signed(client, url, _shortcut(user=user, channel=channel)).status_code == 200
        assert expected in slack_api.calls[-1][1]["text"], (user, channel)
    assert not Interaction.objects.exists()
    assert {c[0] for c in slack_api.calls} == {"chat.postEphemeral"}


def test_slash_command_shows_status_to_members_only(client, world, linked, slack_api):
    from tests.clusters.factories_clusters import ready_cluster
    from tests.workloads.factories_interactions import InteractionFactory

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


@pytest.mark.django_db(transaction=True)
def test_notifications_about_a_logged_interaction_reply_in_its_thread(request, monkeypatch, client, world,
                                                                     linked, slack_api):
    """A real worker takes the reply: an internal event stays out of the customer channel's thread, a shared
    one is posted in it."""
    from django.conf import settings

    from portal.notifications import Event, notify

    monkeypatch.setenv("SLACK_API_URL", settings.SLACK_API_URL)  # the worker process reads its settings from here
    monkeypatch.setenv("SLACK_BOT_TOKEN", settings.SLACK_BOT_TOKEN)
    request.getfixturevalue("celery_worker_process")
    _signed(client, reverse("engagement:slack_interactivity"), _shortcut())
    interaction = Interaction.objects.get()
    slack_api.calls.clear()
    notify(Event(kind="interaction.escalated", title="Escalated internally", visibility="internal",
                 organization_id=world.org_a.pk, extra={"interaction": interaction.pk}))
    notify(Event(kind="interaction.status", title="Support case is now resolved", visibility="shared",
                 organization_id=world.org_a.pk, extra={"interaction": interaction.pk}))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not slack_api.calls:
        time.sleep(0.2)
    time.sleep(1)  # give a wrongly sent internal event the time to arrive too
    posts = [c for c in slack_api.calls if c[0] == "chat.postMessage"]
    assert len(posts) == 1, slack_api.calls
    args = posts[0][1]
    assert (args["channel"], args["thread_ts"]) == ("C0ALPHA", "1764000000.000100")
    assert args["text"].startswith("Support case is now resolved") and posts[0][2] == "Bearer xoxb-test-token"
