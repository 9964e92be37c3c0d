"""Fixtures of the launch pipeline tests."""
import pytest

DOWN = "redis://127.0.0.1:1/0"


class _Broker:
    """Switches the Celery app's broker to a port nothing listens on, and back."""

    def __init__(self, app):
        self.app = app
        self.saved = (app.conf.broker_url, app.conf.get("broker_write_url"))

    def _set(self, url, write_url):
        self.app.conf.broker_url = url
        self.app.conf.broker_write_url = write_url
        self.app._pool = None
        self.app.amqp._producer_pool = None

    def down(self):
        self._set(DOWN, DOWN)

    def restore(self):
        self._set(*self.saved)


@pytest.fixture
def unreachable_broker():
    """The broker is unreachable until the test calls ``restore()``."""
    from portal.celery import app

    broker = _Broker(app)
    broker.down()
    yield broker
    broker.restore()


def start_worker(aws_url: str, name: str, extra_env: dict | None = None):
    """A real `celery worker` on the launch queues of the test broker and database (tests/workers.py)."""
    from pathlib import Path

    from django.conf import settings

    from tests import workers

    return workers.start_worker(name, env=workers.worker_env(aws_url, extra_env), queues="default,launches",
                                log=Path(settings.TEST_VAR_DIR) / "celery-worker.log")


@pytest.fixture
def quotas(world):
    """Organization A's quotas today: 16 × p5.48xlarge and 16 × trn1.32xlarge in ap-northeast-1."""
    from tests.workloads.factories_workloads import InstanceQuotaFactory

    return [InstanceQuotaFactory(organization=world.org_a, instance_type_name=name, count=16, region="ap-northeast-1")
            for name in ("p5.48xlarge", "trn1.32xlarge")]
