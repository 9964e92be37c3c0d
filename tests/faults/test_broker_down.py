"""Redis stops: pages still render and /healthz says what is down.

Uses a private redis-server on a free port (a real Redis), stopped and started by the test, so the
machine's own Redis is left alone.
"""
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
from django.urls import reverse

from portal.celery import app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateRedis:
    def __init__(self):
        self.port = _free_port()
        self.proc = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("private redis did not start")

    def pause(self) -> None:
        """Hung, not stopped: connections are still accepted (by the kernel) but nothing answers."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server takes its SIGTERM once it runs
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = PrivateRedis()
    redis.start()
    previous = app.conf.broker_url
    app.conf.broker_url = redis.url
    app._pool = None
    yield redis
    redis.stop()
    app.conf.broker_url = previous
    app._pool = None
    app.amqp._producer_pool = None  # the producer pool caches the private Redis's connection pool


def test_pages_render_and_healthz_degrades_while_redis_is_down(client, world, private_redis):
    client.force_login(world.staff)  # /healthz names the degraded part to staff only
    assert client.get("/healthz").json()["broker"]["ok"] is True
    client.force_login(world.lead_a)
    private_redis.stop()
    app._pool = None
    page = client.get(world.org_a.get_absolute_url())
    assert page.status_code == 200
    assert client.get(reverse("portal:lead_home")).status_code == 200
    client.force_login(world.staff)
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "degraded" and health.json()["broker"]["ok"] is False
    private_redis.start()
    app._pool = None
    assert client.get("/healthz").json()["broker"]["ok"] is True


def test_notifications_the_broker_missed_are_sent_by_the_sweep(world, private_redis, django_capture_on_commit_callbacks):
    import redis as redis_lib

    from portal.core.models import NotificationDelivery, NotificationSetting
    from portal.core.notifications import Event, notify, sweep_pending

    NotificationSetting.objects.create(name="#leads", email_recipients="leads@example.com", include_internal=True)
    private_redis.stop()
    app._pool = None
    with django_capture_on_commit_callbacks(execute=True):
        notify(Event(kind="health_fault", title="XID 79 on node 3", organization_id=world.org_a.pk, severity="critical"))
    delivery = NotificationDelivery.objects.get()
    assert delivery.status == "pending" and delivery.dispatched_at is None  # kept, not lost
    assert sweep_pending() == 0  # still down: nothing sent, nothing claimed
    assert NotificationDelivery.objects.get().dispatched_at is None

    private_redis.start()
    app._pool = None
    app.amqp._producer_pool = None
    assert sweep_pending() == 1
    assert NotificationDelivery.objects.get().dispatched_at is not None
    assert redis_lib.Redis.from_url(private_redis.url).llen("notifications") == 1  # the task is on its queue
    assert sweep_pending() == 0  # claimed once: a second sweep does not send it again
