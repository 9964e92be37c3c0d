"""Run the whole portal on one machine: embedded AWS, a Celery worker and beat, the web server, and the demo's
emulated exporters pushing its clusters' health.

Redis is used when it answers (``REDIS_URL`` or 127.0.0.1:6379); otherwise the broker is kombu's
filesystem transport under var/broker, and the command says so. Ctrl-C stops every process.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from portal.core.logfilters import expected_aws_line
from portal.core.processes import die_with_parent  # noqa: E402
from sandbox import program as demo
from sandbox import sso as sso_demo


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_redis_db(port: int) -> int:
    """The Redis database of a demo on ``port``: ``DEMO_REDIS_DB`` when set, else one derived from the port
    (1-14), so two demos on one machine never consume each other's tasks. Database 0 is left to whatever
    else runs there and 15 to the test suite."""
    if os.environ.get("DEMO_REDIS_DB"):
        return int(os.environ["DEMO_REDIS_DB"])
    return 1 + port % 14


def _redis_url(port: int = 8000) -> str | None:
    url = os.environ.get("REDIS_URL") or f"redis://127.0.0.1:6379/{demo_redis_db(port)}"
    host, port = "127.0.0.1", 6379
    rest = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    if ":" in rest:
        host, port = rest.split(":")[0], int(rest.split(":")[1])
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return url
    except OSError:
        return None


def demo_base_url(port: int) -> str:
    """The demo portal's own address (``PORTAL_BASE_URL`` of every demo process)."""
    return f"http://127.0.0.1:{port}"


def demo_web_environment(*, debug: bool = False) -> dict[str, str]:
    """The demo looks and behaves like the product: DEBUG off (the portal's own 404/403/500 pages, no URL
    list on a mistyped address), static files served by WhiteNoise from the app directories."""
    return {"DEBUG": "true" if debug else "false"}


def _pass_lines(stream, out, drop) -> None:
    """Copy a child's output to ``out`` line by line, leaving out the lines ``drop`` names."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        if not drop(line):
            out.write(line)
            out.flush()
    stream.close()


def _wait_http(url: str, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)  # noqa: S310 (http URLs built above)
            return True
        except OSError:
            time.sleep(0.2)
    return False


class Command(BaseCommand):
    help = "Start the demo portal: embedded AWS endpoint, Celery worker and beat, web server on 127.0.0.1:8000."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--aws-port", type=int, default=0, help="Port of the embedded AWS endpoint (0: any free one).")
        parser.add_argument("--debug", action="store_true",
                            help="Django's debug pages (off by default: the demo behaves like the product).")

    def start_identity_provider(self, start, base: Path, port: int) -> str:
        """Mirai Code's identity provider (sandbox/sso.py), when Node.js and oidc-provider are installed: its
        issuer, or empty after one line saying why there is none."""
        planned = sso_demo.plan(base / "var" / "sso-provider", port)
        if isinstance(planned, str):
            self.stdout.write(self.style.WARNING(planned))
            return ""
        command, issuer, discovery = planned
        start("sso", command)
        if not _wait_http(discovery):
            self.stdout.write(self.style.WARNING("Single sign-on: the demo's identity provider did not start; "
                                                 "Mirai Code's people sign in with passwords."))
            return ""
        self.stdout.write(f"Identity provider of Mirai Code: {issuer}")
        return issuer

    def handle(self, *args, port: int, aws_port: int, **options):
        python = sys.executable
        base = Path(settings.BASE_DIR)
        (base / "var").mkdir(exist_ok=True)
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.local")
        env.update(demo_web_environment(debug=options["debug"]))
        env.setdefault("DEMO_QUIET_CONSOLE", "true")  # a refused page is one line (portal/core/logfilters.py)
        # The portal's own address is this server's: the emulated nodes push their health and the validation jobs
        # on the emulated head nodes post their outputs here; notification links point here. It is http, so a
        # launched observability stack subscribes no SNS endpoint (SNS needs https).
        env["PORTAL_BASE_URL"] = demo_base_url(port)
        for key, value in (("AWS_ACCESS_KEY_ID", "demo"), ("AWS_SECRET_ACCESS_KEY", "demo"),
                           ("AWS_DEFAULT_REGION", settings.AWS_DEFAULT_REGION)):
            env.setdefault(key, value)

        redis_url = _redis_url(port)
        if redis_url:
            env["REDIS_URL"] = redis_url
            env["CELERY_BROKER_URL"] = redis_url
            self.stdout.write(f"Broker: Redis at {redis_url}")
        else:
            env.pop("REDIS_URL", None)
            env["CELERY_BROKER_URL"] = "filesystem://"
            for sub in ("out", "processed"):
                (base / "var" / "broker" / sub).mkdir(parents=True, exist_ok=True)
            self.stdout.write(self.style.WARNING(
                "Redis is not reachable: using the single-host filesystem broker under var/broker."
            ))

        procs: list[tuple[str, subprocess.Popen]] = []

        def start(name: str, cmd: list[str], drop=None) -> subprocess.Popen:
            pipe = subprocess.PIPE if drop else None
            proc = subprocess.Popen(cmd, cwd=base, env=env, preexec_fn=die_with_parent, stdout=pipe, stderr=pipe)
            if drop:
                for stream, out in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
                    threading.Thread(target=_pass_lines, args=(stream, out, drop), daemon=True).start()
            procs.append((name, proc))
            return proc

        def stop_all(*_):
            for _name, proc in reversed(procs):
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
            for _name, proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)

        def on_term(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, on_term)
        try:
            if not env.get("AWS_ENDPOINT_URL"):
                aws_port = aws_port or _free_port()
                # moto's expected `POST / 400` answers are left out of the console.
                start("aws", [python, "-m", "sandbox.aws.embedded", "--port", str(aws_port)], drop=expected_aws_line)
                env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{aws_port}"
                if not _wait_http(f"{env['AWS_ENDPOINT_URL']}/moto-api/"):
                    raise SystemExit("The embedded AWS endpoint did not start.")
                self.stdout.write(f"Embedded AWS endpoint: {env['AWS_ENDPOINT_URL']}")
            os.environ.update(env)
            settings.AWS_ENDPOINT_URL = env["AWS_ENDPOINT_URL"]
            subprocess.run([python, "manage.py", "migrate", "--no-input"], cwd=base, env=env, check=True)
            sso_issuer = self.start_identity_provider(start, base, port)
            if sso_issuer:  # the portal calls its provider on loopback: the operator's lists name 127.0.0.1
                for key in ("OUTBOUND_HTTP_HOSTS", "OUTBOUND_ALLOWED_HOSTS"):
                    env[key] = ",".join(filter(None, [env.get(key, ""), "127.0.0.1"]))
            subprocess.run([python, "manage.py", "seed_demo", "--sso-issuer", sso_issuer], cwd=base, env=env,
                           check=True)
            queues = "default,launches,health,notifications"
            start("worker", [python, "-m", "celery", "-A", "portal", "worker", "-Q", queues,
                             "--concurrency", "2", "--loglevel", "INFO", "--hostname", "demo@%h"])
            start("beat", [python, "-m", "celery", "-A", "portal", "beat", "--loglevel", "INFO",
                           "--schedule", str(base / "var" / "celerybeat-schedule")])
            start("web", [python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"])
            # The emulated exporters: every ready cluster keeps reporting its health while the demo runs.
            start("pushes", [python, "manage.py", "push_demo_health"])
            if _wait_http(f"http://127.0.0.1:{port}/healthz", 60):
                self.stdout.write(self.style.SUCCESS(f"\nThe portal is at http://127.0.0.1:{port}/"))
                self.stdout.write(f"Demo logins (password: {demo.DEMO_PASSWORD}):")
                for username, role in demo.LOGINS:
                    self.stdout.write(f"  {username:<8} {role}")
                if sso_issuer:
                    self.stdout.write(f"Single sign-on: 'Continue with your organization' as {', '.join(sso_demo.PEOPLE)} "
                                      f"(Mirai Code; any password at its provider, {sso_issuer}).")
                self.stdout.write("Press Ctrl-C to stop everything.\n")
            while all(proc.poll() is None for _, proc in procs):
                time.sleep(0.5)
            dead = [name for name, proc in procs if proc.poll() is not None]
            self.stderr.write(f"Stopped because {', '.join(dead)} exited.")
        except KeyboardInterrupt:
            self.stdout.write("\nStopping…")
        finally:
            stop_all()
