"""The health area's families on /metrics: pushes waiting per cluster and the age of the oldest one.

A push is unprocessed while pending or processing; its age is what an operator's lag is (the goal: never older than
two push intervals). Read from the rows at scrape time, one grouped query, labelled by cluster id only.
"""
from __future__ import annotations

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from clusters.health.models import HealthPush, PushStatus

UNPROCESSED = (PushStatus.PENDING, PushStatus.PROCESSING)


def families() -> list:
    waiting = GaugeMetricFamily("portal_health_pushes_unprocessed", "Pushes accepted and not yet processed, by "
                                "cluster id.", labels=["cluster_id"])
    oldest = GaugeMetricFamily("portal_health_push_oldest_unprocessed_age_seconds", "Age of the oldest push not "
                               "yet processed, by cluster id.", labels=["cluster_id"])
    overall = GaugeMetricFamily("portal_health_push_lag_seconds_max", "Age of the oldest push not yet processed, "
                                "any cluster (0 when none waits).")
    now = timezone.now()
    worst = 0.0
    rows = (HealthPush.objects.filter(status__in=UNPROCESSED).order_by().values("cluster_id")
            .annotate(n=Count("pk"), first=Min("received_at")))
    for row in rows:
        age = max((now - row["first"]).total_seconds(), 0.0)
        worst = max(worst, age)
        waiting.add_metric([str(row["cluster_id"])], row["n"])
        oldest.add_metric([str(row["cluster_id"])], age)
    overall.add_metric([], worst)
    return [waiting, oldest, overall]
