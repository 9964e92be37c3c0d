"""The embedded AWS endpoint: moto's server with the blueprint resource types installed.

The demo's process supervisor runs ``python -m sandbox.aws.embedded --port N``; the tests call
:func:`start_server` once per session and :func:`reset` between tests. Clients reach it with
boto3's ``endpoint_url`` (or ``AWS_ENDPOINT_URL``) and any credentials.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
import urllib.request

from moto.server import ThreadedMotoServer

from sandbox.aws.moto_install import install


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def start_server(host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadedMotoServer, str]:
    """Start moto in a thread of this process (``port=0`` picks a free one); returns it and its URL.

    The server must run in the process where :func:`install` ran, which is why it is threaded
    rather than a subprocess.
    """
    install()
    port = port or _free_port(host)
    server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
    server.start()
    return server, f"http://{host}:{port}"


def reset(url: str) -> None:
    """Forget every resource the endpoint holds (moto's own reset API)."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an endpoint URL: {url!r}")
    request = urllib.request.Request(f"{url.rstrip('/')}/moto-api/reset", data=b"", method="POST")  # noqa: S310 - scheme checked
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - scheme checked
        response.read()


def main(argv: list[str] | None = None) -> int:
    """Run the endpoint in the foreground until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(description="Embedded AWS endpoint (moto) for the portal demo")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    server, url = start_server(args.host, args.port)
    print(url, flush=True)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
