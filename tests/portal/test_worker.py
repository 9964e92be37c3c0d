"""A real Celery worker process consumes the portal's tasks through Redis."""
import pytest
from celery import Celery

from portal.core import jobs
from portal.core.tasks import ping


@pytest.mark.worker
def test_real_worker_consumes_a_task_through_redis(celery_worker_process):
    result = ping.apply_async(["hello from the test"], ignore_result=False)
    assert result.get(timeout=30) == "hello from the test"


def test_send_reports_an_unreachable_broker():
    down = Celery("down", broker="redis://127.0.0.1:1/0", set_as_current=False)
    down.conf.broker_transport_options = {"max_retries": 1, "socket_connect_timeout": 0.5}
    down.conf.task_publish_retry_policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1}

    @down.task(name="noop")
    def noop():
        return None

    assert jobs.send(noop) is False
