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
