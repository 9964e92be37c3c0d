"""The Celery application: JSON only, late acknowledgement, one queue per kind of work.

Launches, health ingestion and notifications get their own queues so a burst of one (launch day, a
scrape of 2,000 nodes) cannot starve the others; a deployment may run a worker per queue.
"""
import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.local")

# Seconds a send may wait on Redis (connecting, or for an answer): one try, so a request that sends a task
# answers within 2 s even when Redis is hung. No publish retry: redis-py itself replaces a pooled connection
# that a Redis restart left stale, and a send that fails is not lost (the sweep sends it).
REDIS_SOCKET_TIMEOUT = 1.0
PUBLISH_RETRY_POLICY = {"max_retries": 0, "interval_start": 0, "interval_step": 0.1, "interval_max": 0.1}

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_time_limit=300,
    task_soft_time_limit=240,
    task_default_queue="default",
    task_queues=(
        Queue("default"),
        Queue("launches"),
        Queue("health"),
        Queue("notifications"),
    ),
    task_routes={
        "clusters.tasks.*": {"queue": "launches"},
        "clusters.health.tasks.*": {"queue": "health"},
        "portal.notifications.*": {"queue": "notifications"},
    },
    broker_connection_retry_on_startup=True,
    # Results are never read: nothing waits on a result store, so sending a task subscribes to none (a
    # Redis result store made every send wait ~20 s for it when Redis was down). A caller that wants a
    # result asks for one (``apply_async(..., ignore_result=False)``) and needs CELERY_RESULT_BACKEND.
    task_ignore_result=True,
    # A request that enqueues work must not hang when Redis is down: one bounded try, then the caller keeps
    # the row and the periodic sweep dispatches it later.
    task_publish_retry=True,
    task_publish_retry_policy=PUBLISH_RETRY_POLICY,
    broker_connection_timeout=1,
    result_expires=3600,
    worker_send_task_events=False,
    # When an operator configures a result store, reaching it is bounded the same way.
    redis_socket_connect_timeout=1,
    redis_socket_timeout=REDIS_SOCKET_TIMEOUT,
    result_backend_transport_options={"retry_policy": PUBLISH_RETRY_POLICY},
)
app.conf.broker_transport_options = {
    "max_retries": 0,  # no 2 s pause before reconnecting: the worker's consumer has its own reconnect loop
    "socket_connect_timeout": 1,
    # Without it a publish on a connection to a hung Redis (or one that vanished without closing TCP)
    # waits forever; the worker's BRPOP is read by its event loop and is not affected.
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    **app.conf.broker_transport_options,
}
app.autodiscover_tasks()
