"""Server-side request forgery: the guarded outbound client, the health-pull settings and the Slack webhook.

A real listener on 127.0.0.1, started here, records every request it gets: with the default settings
no request reaches it, and when an operator allow-lists it, nothing it answers reaches a page.
"""
from __future__ import annotations

import ipaddress
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from clusters.health.choices import AuthKind
from clusters.health.models import ClusterHealthConfig
from clusters.health.tasks import pull_cluster
from portal.core import outbound
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.core.notifications import Event, deliver, notify
from tests.health.factories_health import ClusterFactory

INTERNAL = "INTERNAL-ADMIN-PAGE-root:x:0:0"


class _Listener(BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.server.hits.append((self.command, self.path, dict(self.headers.items()), self.rfile.read(length)))
        status, headers, body = self.server.reply
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    server.hits = []
    server.reply = (500, {"Content-Type": "text/html"}, INTERNAL.encode())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def _config(world, url, **extra):
    cluster = ClusterFactory(organization=world.org_a)
    return ClusterHealthConfig.objects.create(cluster=cluster, pull_enabled=True, pull_url=url, **extra)


# Addresses a worker must never call unless an operator allow-lists them.
REFUSED = [
    "https://127.0.0.1/", "https://127.1.2.3:8080/", "https://localhost/", "https://localhost./",
    "https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/", "https://[::1]/",
    "https://[::ffff:127.0.0.1]/", "https://10.0.0.5/", "https://172.16.0.1/", "https://192.168.1.1/",
    "https://100.64.0.1/", "https://0.0.0.0/", "https://224.0.0.1/", "https://240.0.0.1/",
    "https://2130706433/", "http://example.com/", "ftp://example.com/", "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_FLUSHALL", "https://user:pw@example.com/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_refused_addresses(url):
    with pytest.raises(outbound.OutboundError) as caught:
        outbound.resolve(url)
    assert caught.value.reason and url not in caught.value.reason


def test_public_addresses_and_amp_hosts_pass_the_static_check(settings):
    assert outbound.is_public_address("52.95.1.1") and outbound.is_public_address("2600:1f18::1")
    assert outbound.parse("https://93.184.215.14/x").port == 443
    assert outbound.is_amp_host("aps-workspaces.ap-northeast-1.amazonaws.com")
    assert not outbound.is_amp_host("aps-workspaces.evil.com.amazonaws.com.attacker.net")
    assert not outbound.is_allowed_host("aps-workspaces.us-east-1.amazonaws.com")  # the shape allows nothing
    assert not outbound.is_allowed_host("127.0.0.1")
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    assert outbound.is_allowed_host("127.0.0.1")


def test_pull_to_a_refused_address_never_reaches_it(world, listener):
    """A row pointing at loopback (as saved before this check existed): the worker refuses before connecting."""
    config = _config(world, listener.url, auth_kind=AuthKind.BEARER, secret="s3cr3t")
    assert pull_cluster(config.pk) is None
    config.refresh_from_db()
    assert listener.hits == []
    assert config.last_pull_error == "Use https: plain http is allowed only for hosts the operator named."
    https_loopback = listener.url.replace("http://", "https://")
    ClusterHealthConfig.objects.filter(pk=config.pk).update(pull_url=https_loopback)
    assert pull_cluster(config.pk) is None
    config.refresh_from_db()
    assert listener.hits == []
    assert "private, local or reserved" in config.last_pull_error


def test_the_settings_form_refuses_internal_addresses(client, world, listener):
    cluster = ClusterFactory(organization=world.org_a)
    client.force_login(world.lead_a)
    url = reverse("health:cluster_health_settings", args=[cluster.pk])
    for target in (listener.url, "https://169.254.169.254/latest", "https://10.1.2.3:9090"):
        response = client.post(url, {"pull_enabled": "on", "pull_url": target, "auth_kind": AuthKind.NONE})
        assert response.status_code == 200
        assert response.context["form"].errors["pull_url"]
    assert not ClusterHealthConfig.objects.filter(cluster=cluster).exclude(pull_url="").exists()
    assert listener.hits == []


def test_no_response_text_reaches_the_page(client, world, listener, outbound_allows_local):
    """Allow-listed by the operator: the endpoint is called, but the page shows a status and the
    portal's sentence, never what the endpoint said (an error page, or a 200's error field)."""
    config = _config(world, listener.url)
    client.force_login(world.lead_a)
    page_url = reverse("health:cluster_health_settings", args=[config.cluster_id])

    assert pull_cluster(config.pk) is None
    config.refresh_from_db()
    assert (config.last_pull_status, config.last_pull_error) == (500, "The host had an error (HTTP 500).")
    page = client.get(page_url).content.decode()
    assert "HTTP 500" in page and INTERNAL not in page

    listener.reply = (200, {"Content-Type": "application/json"},
                      json.dumps({"status": "error", "errorType": INTERNAL, "error": INTERNAL}).encode())
    pull_cluster(config.pk)
    config.refresh_from_db()
    assert config.last_pull_error == "The endpoint refused the query." and INTERNAL not in config.last_pull_error
    listener.reply = (200, {"Content-Type": "text/html"}, INTERNAL.encode())
    pull_cluster(config.pk)
    config.refresh_from_db()
    assert config.last_pull_error.startswith("The endpoint did not answer JSON")
    assert INTERNAL not in client.get(page_url).content.decode()
    assert len(listener.hits) == 3


def test_redirects_are_not_followed(world, listener, outbound_allows_local):
    second = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    second.hits, second.reply = [], (200, {}, b"{}")
    threading.Thread(target=second.serve_forever, daemon=True).start()
    try:
        listener.reply = (302, {"Location": f"http://127.0.0.1:{second.server_address[1]}/"}, b"")
        config = _config(world, listener.url)
        pull_cluster(config.pk)
        config.refresh_from_db()
        assert config.last_pull_status == 302 and "does not follow redirects" in config.last_pull_error
        assert len(listener.hits) == 1 and second.hits == []
    finally:
        second.shutdown()
        second.server_close()


def test_answers_over_the_cap_are_refused(listener, outbound_allows_local):
    listener.reply = (200, {}, b"x" * 5000)
    with pytest.raises(outbound.OutboundError, match="larger than 1,000 bytes"):
        outbound.post(listener.url, body=b"", max_bytes=1000)
    assert outbound.post(listener.url, body=b"", max_bytes=5000).body == b"x" * 5000


def test_a_new_url_or_auth_kind_drops_the_stored_secret(client, world, listener):
    config = _config(world, "https://prometheus.example.com", auth_kind=AuthKind.BEARER, secret="tok-1")
    client.force_login(world.lead_a)
    url = reverse("health:cluster_health_settings", args=[config.cluster_id])
    # Same endpoint, secret left blank: kept.
    client.post(url, {"pull_enabled": "on", "pull_url": "https://prometheus.example.com", "auth_kind": "bearer"})
    config.refresh_from_db()
    assert config.secret == "tok-1"
    # A new endpoint without a new secret: refused, and the old secret is not carried over.
    response = client.post(url, {"pull_enabled": "on", "pull_url": "https://attacker.example.net",
                                 "auth_kind": "bearer"})
    assert "Give the secret again" in response.content.decode()
    config.refresh_from_db()
    assert (config.pull_url, config.secret) == ("https://prometheus.example.com", "tok-1")
    # Switching to no auth on a new URL saves with the secret cleared.
    client.post(url, {"pull_enabled": "on", "pull_url": "https://attacker.example.net", "auth_kind": "none"})
    config.refresh_from_db()
    assert (config.pull_url, config.auth_kind, config.secret) == ("https://attacker.example.net", "none", "")
    # The model holds the rule for any other writer too.
    config.auth_kind, config.secret = AuthKind.BEARER, "tok-2"
    config.save()
    config.pull_url = "https://elsewhere.example.org"
    config.save()
    config.refresh_from_db()
    assert config.secret == ""


def test_slack_webhook_to_a_refused_address_is_never_called(world, listener):
    listener.reply = (200, {}, b"ok")
    NotificationSetting.objects.create(name="leads", slack_webhook_url=listener.url + "/services/x",
                                       min_severity="low", include_internal=True)
    (pk,) = notify(Event(kind="x", title="to loopback", severity="high"))
    assert deliver.apply(args=[pk]).get() == "failed"
    delivery = NotificationDelivery.objects.get(pk=pk)
    assert delivery.error == "Slack webhook: Use https: plain http is allowed only for hosts the operator named."
    assert listener.hits == []


def test_slack_webhook_setting_is_validated(db):
    from django.core.exceptions import ValidationError

    setting = NotificationSetting(name="x", slack_webhook_url="https://169.254.169.254/hooks")
    with pytest.raises(ValidationError, match="private, local or reserved"):
        setting.full_clean()
    NotificationSetting(name="y", slack_webhook_url="https://hooks.slack.com/services/T/B/X").full_clean()


# DNS rebinding: a real name server on 127.0.0.1 (dnslib) answers as an attacker's would, and a raw TCP
# listener on 127.0.0.1 records every connection made to it (a TLS handshake counts, not only HTTP).
class _ScriptedZone:
    """Answers A queries for each name from its script, one answer set per query (the last one repeats);
    AAAA queries get the script's IPv6 addresses, if any (a fixed set). Every question asked is recorded."""

    def __init__(self, script):
        self.script = {name: list(answers) for name, answers in script.items()}
        self.asked: list[tuple[str, str]] = []

    def resolve(self, request, handler):
        from dnslib import AAAA, QTYPE, RCODE, RR, A

        name, qtype = str(request.q.qname).rstrip("."), QTYPE[request.q.qtype]
        self.asked.append((name, qtype))
        reply = request.reply()
        answers = self.script.get(name)
        if answers is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif qtype == "A":
            current = answers.pop(0) if len(answers) > 1 else answers[0]
            for address in current:
                if ":" not in address:
                    reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(address), ttl=0))
        elif qtype == "AAAA":
            for address in answers[-1]:
                if ":" in address:
                    reply.add_answer(RR(request.q.qname, QTYPE.AAAA, rdata=AAAA(ipaddress.ip_address(address).exploded), ttl=0))
        return reply


@pytest.fixture
def name_server(settings):
    from dnslib.server import DNSLogger, DNSServer

    zone = _ScriptedZone({})
    server = DNSServer(zone, address="127.0.0.1", port=0, logger=DNSLogger(log="-request,-reply,-truncated,-error"))
    server.start_thread()
    settings.OUTBOUND_DNS_SERVERS = [f"127.0.0.1:{server.server.server_address[1]}"]
    yield zone
    server.stop()
    server.server.server_close()


@pytest.fixture
def loopback_port():
    import socketserver

    class Record(socketserver.BaseRequestHandler):
        def handle(self):
            self.server.connections.append(self.client_address)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Record)
    server.connections = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


PUBLIC = "52.95.110.1"  # a public address: checking it passes; whatever answers there is not the listener


def test_a_name_that_rebinds_to_loopback_never_reaches_it(name_server, loopback_port):
    """First answer public, every later one 127.0.0.1: the request goes to the address that was checked
    (one lookup per request, none at connect time), and the next request is refused before connecting."""
    port = loopback_port.server_address[1]
    name_server.script["rebind.attacker.test"] = [[PUBLIC], ["127.0.0.1"]]
    url = f"https://rebind.attacker.test:{port}/api/v1/query"

    with pytest.raises(outbound.OutboundError) as first:
        outbound.request("GET", url, timeout=2)
    assert loopback_port.connections == []
    assert first.value.reason != outbound.PRIVATE  # the check passed; the public address did not serve the name
    assert name_server.asked.count(("rebind.attacker.test", "A")) == 1

    with pytest.raises(outbound.OutboundError, match="private, local or reserved"):
        outbound.request("GET", url, timeout=2)
    assert name_server.asked.count(("rebind.attacker.test", "A")) == 2
    assert loopback_port.connections == []


def test_a_name_with_one_private_address_among_public_ones_is_refused(name_server, loopback_port):
    port = loopback_port.server_address[1]
    name_server.script["mixed.attacker.test"] = [[PUBLIC, "127.0.0.1", "52.95.110.2"]]
    name_server.script["metadata.attacker.test"] = [["169.254.169.254", PUBLIC]]
    for host in ("mixed.attacker.test", "metadata.attacker.test"):
        with pytest.raises(outbound.OutboundError, match="private, local or reserved"):
            outbound.post(f"https://{host}:{port}/hook", body=b"{}", timeout=2)
        assert (host, "A") in name_server.asked
    assert loopback_port.connections == []


def test_the_configured_name_servers_answer_for_allowed_hosts_and_unknown_names(name_server, loopback_port, settings):
    """The same resolver decides for allow-listed names (here the loopback listener itself is reached,
    which shows the lookups go to the configured server) and unknown names get the portal's sentence."""
    port = loopback_port.server_address[1]
    name_server.script["prometheus.internal.test"] = [["127.0.0.1"]]
    settings.OUTBOUND_ALLOWED_HOSTS = ["prometheus.internal.test"]
    settings.OUTBOUND_HTTP_HOSTS = ["prometheus.internal.test"]
    with pytest.raises(outbound.OutboundError):
        outbound.request("GET", f"http://prometheus.internal.test:{port}/", timeout=2)
    assert len(loopback_port.connections) == 1
    with pytest.raises(outbound.OutboundError, match="does not resolve"):
        outbound.resolve("https://nowhere.attacker.test/")


# Names → what they resolve to → the decision, through the real resolver path (the scripted name server)
# and the real client: "refused" is refused before any connection, "allowed" passes the address check.
# AMP's own host shape no longer exempts a name: a private answer is refused for every name that the
# operator did not list in OUTBOUND_ALLOWED_HOSTS.
DECISIONS = [
    # (host, addresses it resolves to, OUTBOUND_ALLOWED_HOSTS, decision)
    ("aps-workspaces.evil.attacker.amazonaws.com", ["127.0.0.1"], [], "refused"),
    ("aps-workspaces.a.b.c.amazonaws.com", ["10.0.0.7"], [], "refused"),
    ("aps-workspaces.ap-northeast-1.amazonaws.com", ["127.0.0.1"], [], "refused"),
    ("aps-workspaces.ap-northeast-1.amazonaws.com", ["10.0.12.34"], [], "refused"),  # a VPC endpoint, unlisted
    ("aps-workspaces.ap-northeast-1.amazonaws.com", ["10.0.12.34"],
     ["aps-workspaces.ap-northeast-1.amazonaws.com"], "allowed"),  # the operator listed it
    ("aps-workspaces.ap-northeast-1.amazonaws.com", [PUBLIC], [], "allowed"),
    ("aps-workspaces.us-east-1.api.aws", [PUBLIC, "2600:1f18::1"], [], "allowed"),
    ("aps-workspaces.us-east-1.api.aws", [PUBLIC, "::1"], [], "refused"),
    ("prometheus.example.test", ["169.254.169.254"], [], "refused"),
    ("prometheus.example.test", ["fd00:ec2::254"], [], "refused"),
    ("prometheus.example.test", ["::ffff:127.0.0.1"], [], "refused"),
    ("sixtofour.example.test", ["2002:7f00:1::1"], [], "refused"),  # 6to4 of 127.0.0.1
    ("sixtofour.example.test", ["2002:a9fe:a9fe::1"], [], "refused"),  # 6to4 of 169.254.169.254
    ("sixtofour.example.test", ["2002:0a00:0005::1"], [], "refused"),  # 6to4 of 10.0.0.5
    ("sixtofour.example.test", ["2002:345f:6e01::1"], [], "allowed"),  # 6to4 of 52.95.110.1
    ("teredo.example.test", ["2001:0:4136:e378:8000:63bf:80ff:fffe"], [], "refused"),  # client 127.0.0.1
    ("teredo.example.test", ["2001:0:345f:6e01:8000:63bf:cba0:91fe"], [], "allowed"),  # 52.95.110.1 both ends
    ("nat64.example.test", ["64:ff9b::7f00:1"], [], "refused"),  # NAT64 of 127.0.0.1
    ("nat64.example.test", ["64:ff9b::a9fe:a9fe"], [], "refused"),  # NAT64 of 169.254.169.254
    ("nat64.example.test", ["64:ff9b::345f:6e01"], [], "allowed"),  # NAT64 of 52.95.110.1
    ("local.example.test", ["127.0.0.1"], ["*.example.test"], "allowed"),
]


@pytest.mark.parametrize(("host", "addresses", "allowed_hosts", "decision"), DECISIONS)
def test_outbound_decisions(name_server, settings, host, addresses, allowed_hosts, decision):
    name_server.script[host] = [addresses]
    settings.OUTBOUND_ALLOWED_HOSTS = allowed_hosts
    if decision == "refused":
        with pytest.raises(outbound.OutboundError) as caught:
            outbound.resolve(f"https://{host}/api/v1/query")
        assert caught.value.reason == outbound.PRIVATE
    else:
        assert sorted(outbound.resolve(f"https://{host}/api/v1/query").addresses) == sorted(addresses)


@pytest.mark.parametrize(("literal", "public"), [
    ("2002:7f00:1::1", False), ("2002:345f:6e01::1", True), ("64:ff9b::7f00:1", False),
    ("64:ff9b::345f:6e01", True), ("64:ff9b:1::7f00:1", False), ("::ffff:10.0.0.1", False),
    ("::ffff:52.95.110.1", True), ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),
    ("2001:0:345f:6e01:8000:63bf:cba0:91fe", True), ("2001:db8::1", False), ("2600:1f18::1", True),
])
def test_addresses_that_carry_ipv4_are_judged_by_it(literal, public):
    assert outbound.is_public_address(literal) is public
    if not public:
        with pytest.raises(outbound.OutboundError, match="private, local or reserved"):
            outbound.parse(f"https://[{literal}]/")


@pytest.mark.parametrize(("host", "region"), [
    ("aps-workspaces.ap-northeast-1.amazonaws.com", "ap-northeast-1"),
    ("aps-workspaces.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
    ("aps-workspaces-fips.us-east-2.amazonaws.com", "us-east-2"),
    ("aps-workspaces.us-east-1.api.aws", "us-east-1"),
    ("aps-workspaces-fips.us-east-2.api.aws", "us-east-2"),
    ("APS-WORKSPACES.EU-WEST-1.AMAZONAWS.COM.", "eu-west-1"),
    ("aps-workspaces.evil.attacker.amazonaws.com", None),
    ("aps-workspaces.ap-northeast-1.x.amazonaws.com", None),
    ("x.aps-workspaces.ap-northeast-1.amazonaws.com", None),
    ("aps-workspaces.attacker.amazonaws.com", None),
    ("aps-workspaces.ap-northeast-1.amazonaws.com.attacker.net", None),
    ("aps.ap-northeast-1.amazonaws.com", None),
])
def test_amp_host_shape(host, region):
    """AWS documents the data-plane names as aps-workspaces[-fips].<region>.amazonaws.com and, dual-stack,
    …<region>.api.aws; nothing deeper is an AMP workspace host (it signs for nothing)."""
    assert outbound.amp_region(host) == region


def test_a_deeper_amazonaws_name_resolving_to_loopback_is_never_connected_to(name_server, loopback_port, settings):
    """The attack of the report: the old pattern let any depth under amazonaws.com skip the address check."""
    port = loopback_port.server_address[1]
    host = "aps-workspaces.evil.attacker.amazonaws.com"
    name_server.script[host] = [["127.0.0.1"]]
    with pytest.raises(outbound.OutboundError, match="private, local or reserved"):
        outbound.post(f"https://{host}:{port}/api/v1/query", body=b"query=up", timeout=2)
    assert (host, "A") in name_server.asked and loopback_port.connections == []
    # Listed by the operator, the same name reaches the same listener: the refusal was the address check.
    settings.OUTBOUND_ALLOWED_HOSTS = [host]
    with pytest.raises(outbound.OutboundError, match="could not be reached"):
        outbound.post(f"https://{host}:{port}/api/v1/query", body=b"query=up", timeout=2)
    assert len(loopback_port.connections) == 1


@pytest.fixture
def silent_port():
    """Accepts connections and never answers (the connection is held until the test ends)."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def test_connection_failures_share_one_sentence_on_the_page(client, world, listener, silent_port, settings,
                                                            outbound_allows_local, caplog):
    """A closed port, a port that never answers and a port that speaks no TLS look the same on the
    settings page (one sentence); the log says which one it was, for staff."""
    import logging
    import re
    import socket

    settings.HEALTH_PULL_TIMEOUT = 1
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    http_port = listener.server_address[1]
    config = _config(world, "https://127.0.0.1:1")
    client.force_login(world.lead_a)
    page_url = reverse("health:cluster_health_settings", args=[config.cluster_id])
    pages = {}
    for kind, url in (("could not connect", f"http://127.0.0.1:{closed_port}"),
                      ("timed out", f"http://127.0.0.1:{silent_port}"),
                      ("TLS failure", f"https://127.0.0.1:{http_port}")):
        ClusterHealthConfig.objects.filter(pk=config.pk).update(pull_url=url)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="portal.core.outbound"):
            assert pull_cluster(config.pk) is None
        config.refresh_from_db()
        assert (config.last_pull_error, config.last_pull_status) == (outbound.UNREACHABLE, None)
        assert any(kind in r.getMessage() for r in caplog.records), kind
        page = client.get(page_url).content.decode()
        assert outbound.UNREACHABLE in page
        # Everything but the URL itself, the per-request tokens and the minute of the pull.
        tokens = r'(nonce="|csrfmiddlewaretoken" value="|name="_version" value="|"X-CSRFToken": ")[^"]+'
        page = re.sub(tokens, r"\1", page.replace(url, "URL"))
        pages[kind] = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "", page)
    assert len(set(pages.values())) == 1  # nothing else on the page tells them apart
    for words in ("did not answer in time", "TLS", "certificate", "Could not connect", "timed out", "refused"):
        assert words not in pages["timed out"], words
