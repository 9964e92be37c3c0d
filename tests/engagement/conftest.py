"""Fixtures of the engagement tests: a local HTTP server standing in for Slack's Web API, and a Slack channel and
users linked to the test world's organizations and people."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from portal.engagement.models import SlackChannelLink, SlackUserLink

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TEAM = "T0GENIAC"


class FakeSlack(BaseHTTPRequestHandler):
    """Answers the Web API methods the bridge calls and the shortcut's response_url (recorded as "response_url"),
    and records every call. ``script`` holds answers to give first, per method: ``(status, body, headers)``, e.g.
    a rate limit."""

    calls: list = []
    thread: list = []
    script: dict = {}

    def do_POST(self):  # noqa: N802
        method = "response_url" if self.path.startswith("/actions/") else self.path.rsplit("/", 1)[-1]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        args = json.loads(raw) if self.headers.get("Content-Type", "").startswith("application/json") else \
            {k: v[0] for k, v in parse_qs(raw).items()}
        type(self).calls.append((method, args, self.headers.get("Authorization")))
        answers = {
            "chat.getPermalink": {"ok": True, "permalink": f"https://geniac.slack.com/archives/{args.get('channel')}"
                                                           f"/p{args.get('message_ts', '').replace('.', '')}"},
            "conversations.replies": {"ok": True, "messages": type(self).thread, "has_more": False},
            "chat.postMessage": {"ok": True, "ts": "1764000000.000900"},
            "chat.postEphemeral": {"ok": True, "message_ts": "1764000000.000901"},
            "response_url": {"ok": True},
        }
        status, answer, headers = 200, answers.get(method, {"ok": False, "error": "unknown_method"}), {}
        if type(self).script.get(method):
            status, answer, headers = type(self).script[method].pop(0)
        body = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def slack_api(settings):
    FakeSlack.calls, FakeSlack.script = [], {}
    FakeSlack.thread = [
        {"user": "U0LEAD", "ts": "1764000000.000100", "text": "NCCL falls back to sockets on 4 nodes\nlogs attached"},
        {"user": "U0CUST", "ts": "1764000060.000200", "text": "FI_PROVIDER is unset in the image"},
    ]
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeSlack)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.SLACK_API_URL = f"http://127.0.0.1:{server.server_address[1]}/api/"
    settings.SLACK_RESPONSE_URL_PREFIX = f"http://127.0.0.1:{server.server_address[1]}/actions/"
    settings.SLACK_SIGNING_SECRET = SECRET
    settings.SLACK_BOT_TOKEN = "xoxb-test-token"
    yield FakeSlack
    server.shutdown()
    server.server_close()


@pytest.fixture
def linked(world):
    channel = SlackChannelLink.objects.create(channel_id="C0ALPHA", name="#geniac-alpha", organization=world.org_a)
    SlackUserLink.objects.create(team_id=TEAM, slack_user_id="U0LEAD", user=world.lead_a)
    SlackUserLink.objects.create(team_id=TEAM, slack_user_id="U0CUST", user=world.customer_a)
    SlackUserLink.objects.create(team_id=TEAM, slack_user_id="U0BETA", user=world.customer_b)
    return channel
