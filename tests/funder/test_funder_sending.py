"""Sending an issued report to the funder from the portal: the sending is recorded (who, when, to whom, which
version and hash), the e-mail goes out on the notifications' outbound path with the PDF and workbook of each
language chosen attached, a broker outage keeps it for the sweep, a failing mail server is retried, and a
superseded version is never sent without saying so."""
from __future__ import annotations

import datetime

import pytest
from django.core import mail
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from portal.core import submissions
from portal.core.models import NotificationDelivery
from portal.core.notifications import deliver, sweep_pending
from portal.review.funder import exports, sending, services
from portal.review.funder.models import FunderReportSending
from tests.faults.test_broker_down import app, private_redis  # noqa: F401 - the private Redis fixture

AFTER = datetime.datetime(2026, 10, 2, 9, 0, tzinfo=datetime.UTC)
TO = ["ministry@example.go.jp", "analyst@example.go.jp"]
pytestmark = pytest.mark.usefixtures("recipients")


@pytest.fixture
def recipients():
    with override_settings(FUNDER_REPORT_RECIPIENTS=TO):
        yield


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _deliver_all() -> list[str]:
    return [deliver.apply(args=[pk]).get() for pk in NotificationDelivery.objects.filter(
        channel=sending.CHANNEL, status="pending").values_list("pk", flat=True)]


def test_the_program_manager_sends_an_issued_report_with_its_attachments_and_it_is_recorded(
        world, quarter, django_capture_on_commit_callbacks):
    report = services.issue(quarter, world.pm, now=AFTER)
    url = reverse("funder:report_send", kwargs={"pk": report.pk})
    with django_capture_on_commit_callbacks(execute=False):
        first = _client(world.pm).post(url, {"languages": ["en", "ja"], "note": "With our regards",
                                             submissions.FIELD: "send-1"})
        again = _client(world.pm).post(url, {"languages": ["en", "ja"], "note": "With our regards",
                                             submissions.FIELD: "send-1"})  # a double click
    assert first.status_code == again.status_code == 302
    row = FunderReportSending.objects.get()  # one sending for the two posts
    assert (row.sent_by, row.version, row.content_hash, row.recipients, row.languages, row.superseded) == (
        world.pm, 1, report.content_hash, TO, ["en", "ja"], False)
    assert row.delivery.channel == "funder" and row.delivery.status == "pending"
    assert row.history.count() == 1
    assert _deliver_all() == ["sent"]
    email = mail.outbox[0]
    assert email.to == TO and "GENIAC 2026 Q3, version 1" in email.subject and "第 1 版" in email.subject
    assert report.content_hash in email.body and "With our regards" in email.body
    data = services.export_content(report, world.pm)
    attached = {name: body for name, body, _type in email.attachments}
    assert attached == {
        "funder-report-2026-09-30-v1-en.pdf": exports.pdf(data, "en"),
        "funder-report-2026-09-30-v1-en.xlsx": exports.workbook(data, "en"),
        "funder-report-2026-09-30-v1-ja.pdf": exports.pdf(data, "ja"),
        "funder-report-2026-09-30-v1-ja.xlsx": exports.workbook(data, "ja")}
    row.refresh_from_db()
    assert row.state == "sent"
    page = _client(world.pm).get(report.get_absolute_url()).content.decode()
    assert "ministry@example.go.jp" in page and "sent" in page


def test_a_draft_is_not_sent_and_others_may_not_send(world, quarter):
    url = reverse("funder-api:report-send", kwargs={"pk": quarter.pk})
    pm = APIClient()
    pm.force_authenticate(world.pm)
    assert pm.post(url, {"languages": ["en"]}, format="json").status_code == 409
    services.issue(quarter, world.pm, now=AFTER)
    lead = APIClient()
    lead.force_authenticate(world.lead_a)
    assert lead.post(url, {"languages": ["en"]}, format="json").status_code == 403
    assert pm.post(url, {"languages": []}, format="json").status_code == 400
    assert not FunderReportSending.objects.exists() and not NotificationDelivery.objects.exists()
    answer = pm.post(url, {"languages": ["ja"]}, format="json")
    assert answer.status_code == 201 and answer.json()["languages"] == ["ja"]
    assert answer.json()["sent_by"] == world.pm.username
    listed = pm.get(reverse("funder-api:sending-list")).json()
    assert listed["count"] == 1
    assert lead.get(reverse("funder-api:sending-list")).json()["count"] == 0


def test_a_superseded_version_is_sent_only_saying_so(world, quarter):
    old = services.issue(quarter, world.pm, now=AFTER)
    new = services.correct(old, world.pm, "Beta's cost was missing")
    services.issue(new, world.pm, now=AFTER)
    old.refresh_from_db()
    assert old.status == "superseded"
    with pytest.raises(sending.SendError, match="superseded"):
        sending.send(old, world.pm, ["en"])
    assert not FunderReportSending.objects.exists()
    row = sending.send(old, world.pm, ["en", "ja"], superseded_ok=True)
    assert row.superseded and row.version == 1
    assert _deliver_all() == ["sent"]
    email = mail.outbox[0]
    assert email.subject.startswith("[Superseded]") and "【差し替え済み】" in email.subject
    assert "superseded by version 2" in email.body and "第 2 版で差し替えられています" in email.body


def test_a_failing_mail_server_is_retried_and_the_error_kept(world, quarter, monkeypatch):
    report = services.issue(quarter, world.pm, now=AFTER)
    row = sending.send(report, world.pm, ["en"])

    def refuse(self, fail_silently=False):
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr("django.core.mail.EmailMessage.send", refuse)
    # Run eagerly, the task's retries (with backoff) follow one another at once, then the failure is recorded.
    assert deliver.apply(args=[row.delivery_id]).get() == "failed"
    delivery = NotificationDelivery.objects.get(pk=row.delivery_id)
    assert delivery.status == "failed" and "mail server down" in delivery.error and delivery.attempts == 5
    row.refresh_from_db()
    assert row.state == "failed"
    page = _client(world.pm).get(report.get_absolute_url()).content.decode()
    assert "mail server down" in page  # the program manager sees why, and sends again
    monkeypatch.undo()
    again = sending.send(report, world.pm, ["en"])
    assert deliver.apply(args=[again.delivery_id]).get() == "sent"
    assert len(mail.outbox) == 1 and FunderReportSending.objects.count() == 2


def test_with_the_broker_down_the_sending_is_kept_and_the_sweep_sends_it(
        world, quarter, private_redis, django_capture_on_commit_callbacks):  # noqa: F811
    import redis as redis_lib

    report = services.issue(quarter, world.pm, now=AFTER)
    private_redis.stop()
    app._pool = None
    with django_capture_on_commit_callbacks(execute=True):
        response = _client(world.pm).post(reverse("funder:report_send", kwargs={"pk": report.pk}),
                                          {"languages": ["en"]})
    assert response.status_code == 302  # the page answers: the work is queued
    row = FunderReportSending.objects.get()
    assert row.delivery.status == "pending" and row.delivery.dispatched_at is None  # kept, not lost
    assert sweep_pending() == 0
    private_redis.start()
    app._pool = None
    app.amqp._producer_pool = None
    assert sweep_pending() == 1
    assert redis_lib.Redis.from_url(private_redis.url).llen("notifications") == 1
    assert _deliver_all() == ["sent"] and len(mail.outbox) == 1
