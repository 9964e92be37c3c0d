"""One vocabulary: every severity a part of the portal sends is one the notification service ranks."""
import datetime

import pytest
from django.core import mail
from django.utils import timezone

from portal.core.choices import Severity, severity_for_fault, severity_rank, worst_verdict
from portal.core.models import NotificationDelivery, NotificationSetting, TimelineEntry
from portal.core.notifications import Event, deliver, notify
from tests.workloads.factories_workloads import CapacityReservationFactory
from workloads.tasks import warn_expiring


def test_an_unknown_severity_is_an_error_not_normal():
    assert severity_rank("critical") > severity_rank("high") > severity_rank("normal") > severity_rank("low")
    with pytest.raises(ValueError, match="unknown severity 'warning'"):
        severity_rank("warning")


def test_fault_grades_map_onto_the_people_scale():
    assert severity_for_fault("critical") == Severity.CRITICAL
    assert severity_for_fault("warning") == Severity.HIGH
    assert severity_for_fault("info") == Severity.NORMAL
    assert worst_verdict(["healthy", "reboot", "degraded", "bogus"]) == "reboot"
    assert worst_verdict([]) is None


def test_an_expiry_warning_reaches_a_channel_left_at_its_default_minimum(world, django_capture_on_commit_callbacks):
    channel = NotificationSetting.objects.create(name="#geniac-leads", email_recipients="leads@example.com",
                                                 include_internal=True)
    assert channel.min_severity == Severity.HIGH  # the default
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-00000000000000abc",
                               start=timezone.localdate() - datetime.timedelta(days=30),
                               end=timezone.localdate() + datetime.timedelta(days=14))
    with django_capture_on_commit_callbacks(execute=True):
        assert len(warn_expiring()) == 1
    delivery = NotificationDelivery.objects.get()
    assert delivery.setting == channel and delivery.severity == Severity.HIGH
    assert deliver.apply(args=[delivery.pk]).get() == "sent"
    assert len(mail.outbox) == 1 and "ends in 14 days" in mail.outbox[0].subject


def test_an_unknown_severity_never_breaks_the_source(world):
    NotificationSetting.objects.create(name="#all", email_recipients="x@example.com", min_severity="low")
    assert notify(Event(kind="x", title="t", organization_id=world.org_a.pk, severity="bogus")) == []


def test_timeline_severities_are_from_the_vocabulary(world):
    CapacityReservationFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=1))
    warn_expiring()
    entry = TimelineEntry.objects.get(organization=world.org_a, title__startswith="Capacity reservation ends")
    assert entry.severity == Severity.CRITICAL and entry.get_severity_display() == "Critical"
