"""The Celery application: JSON only, late acknowledgement, one queue per kind of work.

Launches, health ingestion and notifications get their own queues so a burst of one (launch day, a
scrape of 2,000 nodes) cannot starve the others; a deployment may run a worker per queue.
"""
import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings.local")

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
    # A request that enqueues work must not hang when the broker is down: fail fast, keep the row,
    # and let the periodic sweep dispatch it later.
    task_publish_retry=True,
    task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5},
    result_expires=3600,
    worker_send_task_events=False,
)
app.conf.broker_transport_options = {
    "max_retries": 2,
    "socket_connect_timeout": 2,
    **app.conf.broker_transport_options,
}
app.autodiscover_tasks()
