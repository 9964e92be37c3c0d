"""Sending an issued report to the funder from the portal.

The program manager sends an issued (or, saying so, a superseded) version in the languages chosen to the
funder's recipients (the program setting ``FUNDER_REPORT_RECIPIENTS``). :func:`send` records the sending
(``FunderReportSending``: who, when, to whom, the version and its content hash) and queues one notification
delivery of the "funder" channel in the same transaction: the portal's outbound path (``portal.core.notifications``),
so the Celery task sends it after commit, retries a failing mail server with backoff, and the minute's sweep
sends it when the broker was down. :func:`deliver` (the channel's sender) draws the PDF and workbook of each
language from the stored content, checks they are still the version recorded (the hash), and sends one e-mail
with them attached. A superseded version is never sent without the e-mail saying which version replaces it.
"""
from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext

from portal.core import notifications
from portal.core.xlsx import CONTENT_TYPE
from portal.review.funder import exports, services
from portal.review.funder.choices import ReportStatus
from portal.review.funder.models import FunderReport, FunderReportSending

CHANNEL = "funder"


class SendError(Exception):
    """The report cannot be sent as asked."""


def recipients() -> list[str]:
    return [a.strip() for a in settings.FUNDER_REPORT_RECIPIENTS if a.strip()]


def _successor(report: FunderReport) -> FunderReport | None:
    return FunderReport.objects.filter(supersedes=report).first()


def send(report: FunderReport, user, languages, *, superseded_ok: bool = False, note: str = "") -> FunderReportSending:
    """Record the sending and queue its e-mail (after commit). Refused: a draft, no recipients, no language, a
    superseded version unless ``superseded_ok``, a report whose stored content no longer matches its hash."""
    languages = [code for code in exports.LANGUAGES if code in set(languages or [])]
    if not languages:
        raise SendError(gettext("Choose the language(s) to send."))
    to = recipients()
    if not to:
        raise SendError(gettext("No recipient of the funder is set (FUNDER_REPORT_RECIPIENTS)."))
    with transaction.atomic():
        report = FunderReport.objects.select_for_update().get(pk=report.pk)
        if report.status == ReportStatus.DRAFT:
            raise SendError(gettext("Only an issued report is sent."))
        superseded = report.status == ReportStatus.SUPERSEDED
        if superseded and not superseded_ok:
            raise SendError(gettext("Version %(number)s is superseded: send the current version, or confirm that "
                                    "you send this one saying it is superseded.") % {"number": report.version})
        if not services.intact(report):
            raise SendError(gettext("The stored report no longer matches its content hash: it is not sent."))
        sending = FunderReportSending(report=report, version=report.version, content_hash=report.content_hash,
                                      languages=languages, recipients=to, superseded=superseded,
                                      note=(note or "").strip(), sent_by=user)
        sending._history_user = user
        sending.save()
        event = notifications.Event(kind="funder_report", title=f"{report} → {', '.join(to)}"[:300],
                                    url=report.get_absolute_url())
        delivery_id = notifications.queue(event, CHANNEL, sending_id=sending.pk)
        FunderReportSending.objects.filter(pk=sending.pk).update(delivery_id=delivery_id)
        sending.delivery_id = delivery_id
    return sending


def _subject_and_body(report: FunderReport, sending: FunderReportSending, language: str) -> tuple[str, str]:
    successor = _successor(report) if sending.superseded else None
    with translation.override(language):
        subject = gettext("%(title)s, version %(number)s") % {"title": report.title, "number": report.version}
        lines = [gettext("Please find attached %(title)s (version %(number)s), for %(start)s to %(end)s, as PDF and "
                         "workbook.") % {"title": report.title, "number": report.version,
                                         "start": report.period_start.isoformat(), "end": report.period_end.isoformat()},
                 gettext("Content hash (SHA-256): %(hash)s") % {"hash": sending.content_hash}]
        if report.supersedes_id:
            lines.append(gettext("This version corrects version %(number)s: %(note)s")
                         % {"number": report.supersedes.version, "note": report.change_note})
        if sending.superseded:
            subject = gettext("[Superseded] %(subject)s") % {"subject": subject}
            lines.insert(0, gettext("This version is superseded by version %(number)s; it is sent for the record.")
                         % {"number": successor.version if successor else "?"})
        if sending.note:
            lines.append(sending.note)
    return subject, "\n\n".join(lines)


def message(sending: FunderReportSending) -> EmailMessage:
    """The e-mail of one sending: the text in each language chosen, the PDF and workbook of each attached."""
    report = FunderReport.objects.select_related("supersedes").get(pk=sending.report_id)
    if report.content_hash != sending.content_hash or not services.intact(report):
        raise notifications.DeliveryRefused("The report's stored content no longer matches the version sent.")
    parts = [_subject_and_body(report, sending, language) for language in sending.languages]
    subject = " / ".join(dict.fromkeys(s for s, _body in parts))
    body = "\n\n----\n\n".join(b for _subject, b in parts)
    email = EmailMessage(subject[:200], body, settings.DEFAULT_FROM_EMAIL, list(sending.recipients))
    data = services.export_content(report, sending.sent_by)
    stem = f"funder-report-{report.period_end:%Y-%m-%d}-v{report.version}"
    for language in sending.languages:
        email.attach(f"{stem}-{language}.pdf", exports.pdf(data, language), "application/pdf")
        email.attach(f"{stem}-{language}.xlsx", exports.workbook(data, language), CONTENT_TYPE)
    return email


def deliver(delivery) -> None:
    """The "funder" channel's sender (``notifications.SENDERS``): raises ``DeliveryError`` to be retried."""
    sending = FunderReportSending.objects.filter(pk=delivery.payload.get("sending_id")).first()
    if sending is None:
        raise notifications.DeliveryRefused("The sending was deleted.")
    email = message(sending)
    try:
        email.send(fail_silently=False)
    except Exception as exc:
        raise notifications.DeliveryError(f"E-mail not sent: {exc}") from exc
