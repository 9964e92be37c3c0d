"""The AWS endpoint throttles or answers 500: the portal's clients retry with backoff over real HTTP,
then give up with a clear, typed error."""
import http.server
import threading

import pytest

from portal.core import aws as portal_aws

THROTTLE = b"""<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">
<Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error>
<RequestId>11111111-2222-3333-4444-555555555555</RequestId></ErrorResponse>"""


class _Failing(http.server.BaseHTTPRequestHandler):
    status = 500
    body = b"<html>Internal Server Error</html>"
    hits = 0

    def do_POST(self):  # noqa: N802 (http.server's naming)
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(self.status)
        self.send_header("Content-Type", "text/xml")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_endpoint(settings):
    def start(status, body):
        handler = type("Handler", (_Failing,), {"status": status, "body": body, "hits": 0})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_address[1]}"
        settings.AWS_MAX_ATTEMPTS = 3
        servers.append(server)
        return handler

    servers = []
    yield start
    for server in servers:
        server.shutdown()


@pytest.mark.parametrize(("status", "body", "code"), [(400, THROTTLE, "Throttling"), (500, _Failing.body, "500")])
def test_throttling_and_server_errors_are_retried_then_reported(failing_endpoint, status, body, code):
    handler = failing_endpoint(status, body)
    client = portal_aws.client("cloudformation")
    with pytest.raises(Exception) as info:
        client.describe_stacks(StackName="geniac-x")
    assert handler.hits == 4  # the first try and AWS_MAX_ATTEMPTS (3) retries with backoff
    error = portal_aws.translate(info.value)
    assert error.retryable
    assert code in error.code or code in str(error)
