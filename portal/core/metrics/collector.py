"""The figures read at scrape time: queues, background jobs, the sweep, and the families areas register.

Counting at scrape time from the broker and the job tables keeps one truth: a queue's depth is Redis's, a job's
state is its row's, whichever process moved it. Queries are per kind of job, not per row (two per kind), and an
area's family (``register``) must be as flat. Every label is an id or a fixed word.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from portal.core.metrics import broker

logger = logging.getLogger(__name__)

SWEEP_STAMP = "sweep_finished"
FAMILIES: dict[str, Callable[[], Iterable[Metric]]] = {}


def register(name: str, families: Callable[[], Iterable[Metric]]) -> None:
    """Add an area's families (a function answering prometheus_client metric families), read at each scrape."""
    FAMILIES[name] = families


def queue_families(names: list[str]) -> list[Metric]:
    depth = GaugeMetricFamily("portal_celery_queue_depth", "Messages waiting in the queue.", labels=["queue"])
    age = GaugeMetricFamily("portal_celery_queue_oldest_message_age_seconds",
                            "Age of the oldest message waiting in the queue (0 when empty).", labels=["queue"])
    for state in broker.queues(names):
        depth.add_metric([state.name], state.depth)
        age.add_metric([state.name], state.oldest_age or 0.0)
    return [depth, age]


def job_families(kinds) -> list[Metric]:
    rows = GaugeMetricFamily("portal_jobs", "Background job rows by kind and state.", labels=["kind", "state"])
    waiting = GaugeMetricFamily("portal_jobs_open", "Open (unfinished) rows of each kind.", labels=["kind"])
    oldest = GaugeMetricFamily("portal_jobs_oldest_open_age_seconds",
                               "Age of the oldest open row of each kind (0 when none is open).", labels=["kind"])
    now = timezone.now()
    for kind in kinds:
        model = kind.model
        manager = model._default_manager
        for state, count in manager.order_by().values_list(model.STATUS_FIELD).annotate(n=Count("pk")):
            rows.add_metric([kind.name, str(state)], count)
        found = manager.filter(model.open()).aggregate(first=Min(model.CREATED_FIELD), n=Count("pk"))
        first = found["first"]
        waiting.add_metric([kind.name], found["n"])
        oldest.add_metric([kind.name], max((now - first).total_seconds(), 0.0) if first else 0.0)
    return [rows, waiting, oldest]


def sweep_families() -> list[Metric]:
    stamps = broker.read_stamps([SWEEP_STAMP])
    last = GaugeMetricFamily("portal_jobs_sweep_last_success_timestamp_seconds",
                             "When the sweep of background jobs last finished (epoch seconds).")
    if SWEEP_STAMP in stamps:
        last.add_metric([], stamps[SWEEP_STAMP])
    return [last]


class PortalCollector:
    """prometheus_client's custom collector: every scrape-time family, each source failing alone."""

    def __init__(self, queues: list[str], kinds: Callable[[], list]):
        self.queues = queues
        self.kinds = kinds

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily("portal_metrics_source_up", "Whether a source of the scrape answered.",
                               labels=["source"])
        sources: list[tuple[str, Callable[[], Iterable[Metric]]]] = [
            ("broker", lambda: queue_families(self.queues) + sweep_families()),
            ("jobs", lambda: job_families(self.kinds())),
            *sorted(FAMILIES.items()),
        ]
        for name, families in sources:
            try:
                found = list(families())
            except Exception:
                logger.exception("metrics: the %s source failed", name)
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            yield from found
        yield up
