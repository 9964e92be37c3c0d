"""A signed ``/geniac`` request replayed within Slack's five-minute window is refused: its signature is remembered
in Redis (shared by every web process) and, bounded, in the process (which still refuses while Redis is down)."""
from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from slack_sdk.signature import SignatureVerifier

from portal.engagement import slack
from tests.engagement.conftest import SECRET, TEAM
from tests.faults.test_broker_down import PrivateRedis, _free_port, private_redis  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_here():
    slack._seen_here.clear()
    yield
    slack._seen_here.clear()


def _signed_headers(body: str) -> dict:
    ts = str(int(time.time()))
    return {"HTTP_X_SLACK_REQUEST_TIMESTAMP": ts,
            "HTTP_X_SLACK_SIGNATURE": SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)}


def _post(client, body: str, headers: dict):
    return client.generic("POST", reverse("engagement:slack_command"), body,
                          content_type="application/x-www-form-urlencoded", **headers)


def _body(**extra) -> str:
    return urlencode({"team_id": TEAM, "command": "/geniac", "channel_id": "C0ALPHA", "user_id": "U0LEAD",
                      "text": "", **extra})


def test_a_replayed_slash_command_is_refused_by_every_process(client, world, linked, slack_api, settings, private_redis):  # noqa: F811
    settings.REDIS_URL = private_redis.url
    body = _body()
    headers = _signed_headers(body)
    first = _post(client, body, headers)
    assert first.status_code == 200 and world.org_a.name in first.json()["text"]
    slack._seen_here.clear()  # another web process: only Redis knows the signature
    replay = _post(client, body, headers)
    assert replay.status_code == 403 and world.org_a.name not in replay.content.decode()
    assert b"already received" in replay.content
    # A new request (new timestamp or body, so a new signature) is answered.
    assert _post(client, _body(text="alpha-labs"), _signed_headers(_body(text="alpha-labs"))).status_code == 200


def test_with_redis_down_the_process_still_refuses_a_replay_and_its_memory_is_bounded(
        client, world, linked, slack_api, settings, monkeypatch):
    settings.REDIS_URL = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    body = _body()
    headers = _signed_headers(body)
    assert _post(client, body, headers).status_code == 200
    assert _post(client, body, headers).status_code == 403
    monkeypatch.setattr(slack, "SEEN_HERE_MAX", 3)
    for n in range(6):
        assert slack.first_use({"X-Slack-Signature": f"v0=sig{n}"})
    assert len(slack._seen_here) <= 3
