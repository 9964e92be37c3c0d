"""Expiry warnings: once per threshold (14, 7, 1 days), on the timeline and through the notification service."""
import datetime
import logging

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from portal.core.models import TimelineEntry
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory
from workloads.models import ExpiryWarning
from workloads.tasks import TASK_NAME, warn_expiring, warn_expiring_task


def days(n):
    return timezone.localdate() + datetime.timedelta(days=n)


def test_warns_at_14_7_and_1_days_once_each(world, caplog):
    reservation = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-00000000000000abc",
                                             start=days(-30), end=days(14))
    today = timezone.localdate()
    with caplog.at_level(logging.INFO, logger="portal.core.notifications"):
        assert warn_expiring(today) == ["Capacity reservation ends in 14 days: cr-00000000000000abc (8 × p5.48xlarge, ap-northeast-1a)"]
    assert "quota_expiry" in caplog.text and "cr-00000000000000abc" in caplog.text
    assert warn_expiring(today) == []  # a re-run repeats nothing
    assert warn_expiring(today + datetime.timedelta(days=1)) == []  # 13 days left: still the 14-day warning
    assert len(warn_expiring(today + datetime.timedelta(days=7))) == 1
    assert warn_expiring(today + datetime.timedelta(days=8)) == []
    assert warn_expiring(today + datetime.timedelta(days=13)) == ["Capacity reservation ends in 1 day: cr-00000000000000abc "
                                                                  "(8 × p5.48xlarge, ap-northeast-1a)"]
    assert warn_expiring(today + datetime.timedelta(days=14)) == []
    entries = TimelineEntry.objects.filter(organization=world.org_a, kind="quota", title__contains="ends in").order_by("id")
    assert list(entries.values_list("severity", flat=True)) == ["high", "high", "critical"]
    assert set(ExpiryWarning.objects.filter(object_id=reservation.pk).values_list("threshold_days", flat=True)) == {14, 7, 1}


def test_a_late_first_run_sends_only_the_tightest_warning(world):
    InstanceQuotaFactory(organization=world.org_a, start=days(-60), end=days(3))
    sent = warn_expiring()
    assert len(sent) == 1 and sent[0].startswith("Quota ends in 3 days")
    assert warn_expiring() == []
    assert len(warn_expiring(timezone.localdate() + datetime.timedelta(days=2))) == 1  # the 1-day warning


def test_far_and_past_ends_are_not_warned(world):
    InstanceQuotaFactory(organization=world.org_a, end=days(40))
    InstanceQuotaFactory(organization=world.org_a, start=days(-90), end=days(-1))
    assert warn_expiring() == []


def test_extended_end_date_warns_again(world):
    quota = InstanceQuotaFactory(organization=world.org_a, start=days(-60), end=days(5))
    assert len(warn_expiring()) == 1
    quota.end = days(6)
    quota.save()
    assert len(warn_expiring()) == 1


def test_task_is_scheduled_by_migration(db):
    task = PeriodicTask.objects.get(task=TASK_NAME)
    assert task.enabled and task.crontab.hour == "9"


def test_task_returns_the_number_sent(world):
    CapacityReservationFactory(organization=world.org_a, end=days(1))
    CapacityReservationFactory(organization=world.org_b, end=days(7))
    assert warn_expiring_task() == 2
    assert warn_expiring_task() == 0


@pytest.mark.worker
def test_a_real_worker_runs_the_expiry_task(celery_worker_process):
    """The task is registered with the worker under the name the beat schedule uses."""
    from portal.celery import app
    from tests.factories import OrganizationFactory

    org = OrganizationFactory(slug="expiry-org")
    CapacityReservationFactory(organization=org, reservation_id="cr-00000000000000777", end=days(7))
    result = app.send_task(TASK_NAME, ignore_result=False)
    assert result.get(timeout=60) == 1
    assert TimelineEntry.objects.filter(organization=org, severity="high", title__contains="cr-00000000000000777").count() == 1
