"""Every message the portal sends to Slack prints users' words as words: no ``<!channel>`` ping, no ``<@user>``
mention and no disguised ``<https://…|…>`` link can come out of a title, body, name or reason.

The senders are enumerated from the code (``SENDERS`` below is checked against every Slack call the product
makes), and each is driven for real with hostile text: the notification webhook (every channel of
``portal.core.notifications`` that reaches Slack, for every kind of event the code raises), the reply in an
interaction's thread, the ephemeral answers (through ``response_url`` and ``chat.postEphemeral``) and the slash
command's answer. Slack's Web API and webhook are local HTTP stand-ins that record what they are sent."""
from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from slack_sdk.signature import SignatureVerifier

from portal.core import notifications
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.core.notifications import Event, deliver, notify
from portal.engagement import slack
from portal.engagement.models import SlackThread
from tests.engagement.conftest import SECRET, TEAM
from tests.interactions.factories_interactions import InteractionFactory
from tests.portal.test_notifications import webhook  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

HOSTILE = ("<!channel> <https://evil.example/login|Your GENIAC session expired: sign in again> "
           "<@U0LEAD> <#C0ALPHA> <!subteam^S0TEAM> & done")
ROOT = Path(__file__).resolve().parents[2]
# Every function of the product that sends a message to Slack, and the test below that drives it.
SENDERS = {
    ("portal/core/notifications.py", "_send_slack"): "test_notifications_of_every_kind_reach_the_webhook_as_text",
    ("portal/engagement/slack.py", "send_thread_reply"): "test_the_reply_in_an_interactions_thread_is_text",
    ("portal/engagement/slack.py", "tell"): "test_ephemeral_answers_are_text_on_both_paths",
    ("portal/engagement/views/slack.py", "_ephemeral"): "test_the_slash_commands_answer_is_text",
}
SLACK_CALLS = re.compile(r"^(chat_(?!getPermalink)\w+|files_\w+|WebhookClient|views_\w+|reactions_\w+)$")


def _markup(text: str) -> list[str]:
    """Slack markup in ``text`` that could ping or disguise: mentions, channel links and the hostile link."""
    return [m for m in re.findall(r"<[^<>]*>", text) if m.startswith(("<!", "<@", "<#")) or "evil" in m]


def _assert_inert(text: str) -> None:
    assert _markup(text) == [], text
    assert "&lt;!channel&gt;" in text and "&amp; done" in text, text


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def _slack_senders() -> set[tuple[str, str]]:
    """(file, function) of every product function that calls Slack's Web API or a webhook, posts the
    notification blocks, or answers Slack with a message (a JSON body with ``response_type``)."""
    found = set()
    for package in ("portal", "workloads", "clusters"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.FunctionDef):
                    continue
                for inner in ast.walk(node):
                    name = ""
                    if isinstance(inner, ast.Call):
                        func = inner.func
                        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    keys = {k.value for k in getattr(inner, "keys", []) if isinstance(k, ast.Constant)}
                    if SLACK_CALLS.match(name) or name == "slack_text" or "response_type" in keys:
                        found.add((relative, node.name))
    return found - {("portal/core/notifications.py", "slack_text")}  # builds the text; _send_slack sends it


def test_every_slack_sender_is_driven_by_a_test_here():
    assert _slack_senders() == set(SENDERS)
    assert all(name in globals() for name in SENDERS.values())


def _event_kinds() -> set[str]:
    """Every literal ``Event(kind=…)`` of the product, and the dynamic ones by their prefix."""
    kinds = set()
    for package in ("portal", "workloads", "clusters"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Event":
                    for keyword in node.keywords:
                        if keyword.arg == "kind":
                            value = keyword.value
                            if isinstance(value, ast.Constant):
                                kinds.add(value.value)
                            elif isinstance(value, ast.JoinedStr) and isinstance(value.values[0], ast.Constant):
                                kinds.add(value.values[0].value + "declined")
                            else:
                                kinds.add("interaction.status")
    return kinds


def test_notifications_of_every_kind_reach_the_webhook_as_text(world, webhook):  # noqa: F811 - fixture
    kinds = _event_kinds()
    assert len(kinds) >= 8, kinds
    NotificationSetting.objects.create(name="#geniac-leads", slack_webhook_url=webhook.url, min_severity="low",
                                       include_internal=True)
    for kind in sorted(kinds):
        notify(Event(kind=kind, title=f"Declined: {HOSTILE}", body=f"Reason: {HOSTILE}", severity="critical",
                     organization_id=world.org_a.pk, url="/organizations/alpha/"))
    for pk in NotificationDelivery.objects.filter(channel="slack").values_list("pk", flat=True):
        assert deliver.apply(args=[pk]).get() == "sent"
    assert len(webhook.received) == len(kinds)
    for message in webhook.received:
        _assert_inert(message["text"])
        texts = [b["text"] for b in message["blocks"]]
        assert all(t["type"] == "mrkdwn" and t["verbatim"] is True for t in texts)
        for text in _strings(message["blocks"]):
            assert _markup(text) == [], text
        assert "|open>" in message["text"]  # the portal's own link to the page is still a link


def test_the_reply_in_an_interactions_thread_is_text(world, linked, slack_api):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared")
    SlackThread.objects.create(interaction=interaction, channel=linked, thread_ts="1764000000.000100")
    notify(Event(kind="interaction.status", title=HOSTILE, visibility="shared", organization_id=world.org_a.pk,
                 extra={"interaction": interaction.pk}))
    delivery = NotificationDelivery.objects.get(channel=slack.THREAD_CHANNEL)
    assert deliver.apply(args=[delivery.pk]).get() == "sent"
    (post,) = [c[1] for c in slack_api.calls if c[0] == "chat.postMessage"]
    _assert_inert(post["text"])
    assert str(post["link_names"]).lower() in ("0", "false")


def test_ephemeral_answers_are_text_on_both_paths(world, linked, slack_api):
    from tests.engagement.test_slack import _response_url

    slack.tell({"response_url": _response_url(), "channel": {"id": "C0ALPHA"}, "user": {"id": "U0LEAD"}},
               f"Nothing was logged: {HOSTILE}")
    slack.tell({"response_url": "", "channel": {"id": "C0ALPHA"}, "user": {"id": "U0LEAD"}},
               f"Nothing was logged: {HOSTILE}")
    sent = {c[0]: c[1] for c in slack_api.calls}
    assert set(sent) == {"response_url", "chat.postEphemeral"}
    for args in sent.values():
        _assert_inert(args["text"])


def test_the_slash_commands_answer_is_text(client, world, linked, slack_api):
    world.org_a.name = f"Alpha {HOSTILE}"
    world.org_a.save(update_fields=["name"])
    # A trigger id of its own: a signature another test sent this second would be refused as a replay.
    body = urlencode({"team_id": TEAM, "command": "/geniac", "channel_id": "C0ALPHA", "user_id": "U0LEAD",
                      "text": "", "trigger_id": "escaping-test"})
    ts = str(int(time.time()))
    response = client.generic("POST", reverse("engagement:slack_command"), body,
                              content_type="application/x-www-form-urlencoded", HTTP_X_SLACK_REQUEST_TIMESTAMP=ts,
                              HTTP_X_SLACK_SIGNATURE=SignatureVerifier(SECRET).generate_signature(timestamp=ts,
                                                                                                  body=body))
    assert response.status_code == 200
    _assert_inert(json.loads(response.content)["text"])


def test_escape_is_slacks_rule():
    from portal.core.slack_markup import escape, link

    assert escape("<!here> a&b <x|y>") == "&lt;!here&gt; a&amp;b &lt;x|y&gt;" and escape(None) == ""
    assert link("https://portal.example/a|b", "<open>") == "<https://portal.example/a%7Cb|&lt;open&gt;>"
    assert notifications.slack_text({"title": "<!channel>"})[0] == "&lt;!channel&gt;"
