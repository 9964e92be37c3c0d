"""What a report keeps of utilization (GR_ENGINE_ACTIVE first, GPU_UTIL else, NeuronCores on Trainium), and the
back-fill command and hourly task writing the same rows as the service."""
from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from clusters.accounting import tasks
from clusters.accounting.compute import HOUR
from clusters.accounting.models import AcceleratorUsage, OrganizationDay
from clusters.health.readers.prometheus import GpuReading
from clusters.health.readers.summary import busy_of, summarize
from tests.accounting.scrapes import p5_scrape
from tests.accounting.test_accounting_figures import build_history, start_of_history


def test_busy_prefers_the_graphics_engine_then_utilization_then_neuroncores():
    both = {0: GpuReading("h", 0, gr_engine_active=0.5, gpu_util=90.0), 1: GpuReading("h", 1, gpu_util=30.0)}
    assert busy_of(both, None) == (pytest.approx(0.4), 2)
    assert busy_of({}, {"0": 0.75, "1": 0.25}) == (0.5, 2)
    assert busy_of({0: GpuReading("h", 0)}, None) == (None, 0)
    assert busy_of({0: GpuReading("h", 0, gpu_util=250.0)}, None) == (1.0, 1)  # clamped


def test_a_report_keeps_the_healthy_nodes_utilization_only():
    summary = summarize(p5_scrape(4, busy=0.6, unhealthy=1), "p5.48xlarge")
    assert summary.utilization == {"healthy_measured": 3, "busy": 0.6, "efa_nodes": 0, "efa_bytes": None}


@pytest.mark.django_db
def test_backfill_command_and_hourly_task(world, settings):
    cluster = build_history(world.org_a)
    t0 = start_of_history()
    call_command("accounting_backfill", "--start", (t0 - HOUR).date().isoformat(), "--cluster", str(cluster.pk))
    rows = AcceleratorUsage.objects.filter(cluster=cluster)
    assert rows.count() == 10 and OrganizationDay.objects.get(organization=world.org_a).held == 1280
    with pytest.raises(CommandError):
        call_command("accounting_backfill", "--start", "2026-13-01")
    settings.ACCOUNTING_RECOMPUTE_HOURS = 24 * 3
    assert tasks.catch_up() == 10  # the task's range covers the history again: the same rows
    assert rows.count() == 10 and sum(r.busy for r in rows) == Decimal("739.2")
    assert OrganizationDay.objects.filter(day=(t0 + datetime.timedelta(hours=1)).date()).count() == 1
