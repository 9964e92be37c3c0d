"""Pages of the report to the funder: the list, a new draft, a report (its parts as the reader may see them:
a customer or a lead SA only their organizations', the program manager all and the program's figures), a part's
narratives (its lead SAs, while a draft), comments on a part, issuing, correcting, and the PDF and workbook in
English or Japanese (program managers: they hold every organization)."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext, gettext_lazy

from portal.core import access, submissions
from portal.core.generic import ObjectActionView, ObjectEditView, ObjectListView, ObjectView, get_object
from portal.core.xlsx import CONTENT_TYPE
from portal.review.funder import exports, sending, services
from portal.review.funder import narratives as report_narratives
from portal.review.funder.forms import CommentForm, CorrectForm, FunderReportForm, FunderReportPartForm, SendForm
from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart, FunderReportSending

MANAGES = gettext_lazy("Only a program manager issues, corrects and exports the report to the funder.")


class _ReportAction(ObjectActionView):
    """A program manager's POST on a report (issue, send, correct): once per submission key."""

    queryset = FunderReport.objects.all()
    action = access.APPROVE
    refusal = MANAGES
    once = True


class FunderReportListView(ObjectListView):
    queryset = FunderReport.objects.select_related("program_cycle")
    template_name = "funder/report_list.html"
    partial_template_name = "funder/htmx/report_table.html"
    csv_fields = (("title", "title"), ("version", "version"), ("kind", "kind"), ("period_start", "period_start"),
                  ("period_end", "period_end"), ("status", "status"), ("content_hash", "content_hash"))
    csv_filename = "funder-reports.csv"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["may_create"] = access.organization_ids(self.request.user, access.APPROVE, FunderReport) is None
        return ctx


class FunderReportAddView(ObjectEditView):
    queryset = FunderReport.objects.all()
    form_class = FunderReportForm
    template_name = "funder/report_form.html"
    action = access.APPROVE
    create_refusal = gettext_lazy("Only a program manager starts a report to the funder.")

    def after_save(self, obj, created: bool) -> None:
        if created:
            obj.created_by = self.request.user
            obj.save(update_fields=["created_by"])
            services.add_parts(obj)


class FunderReportView(ObjectView):
    queryset = FunderReport.objects.select_related("program_cycle", "supersedes", "issued_by")
    template_name = "funder/report_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user, report = self.request.user, self.object
        parts = list(self.visible(FunderReportPart.objects.filter(report=report)).select_related("organization"))
        manages = access.can(user, access.APPROVE, report)
        figures = services.preview(report, user, parts)
        comments = self.visible(FunderReportComment.objects.filter(part__in=parts)).select_related("author")
        by_part: dict[int, list] = {}
        for c in comments:
            by_part.setdefault(c.part_id, []).append(c)
        editable = set(self.visible(FunderReportPart.objects.filter(report=report), access.CHANGE)
                       .values_list("pk", flat=True)) if report.is_draft else set()
        narratives = figures.get("narratives", {})
        ctx.update(
            manages=manages,
            program=figures.get("program") if manages else None,
            per_week=figures.get("per_week", []) if manages else [],
            rows=[{"part": p, "figures": figures.get("organizations", {}).get(p.organization.slug, {}),
                   "narrative": narratives.get(p.organization.slug, {}),
                   "comments": by_part.get(p.pk, []), "may_edit": p.pk in editable,
                   "may_comment": access.can_in_organization(user, access.CHANGE, FunderReportComment,
                                                             p.organization_id)} for p in parts],
            comment_form=CommentForm(), correct_form=CorrectForm(), send_form=SendForm(),
            missing=[(org, str(exports.LANGUAGE_NAMES[lang])) for org, lang in report_narratives.missing(parts)],
            sendings=(self.visible(FunderReportSending.objects.filter(report__title=report.title))
                      .select_related("report", "sent_by", "delivery")[:20]) if manages else [],
            recipients=sending.recipients() if manages else [],
            intact=services.intact(report) if not report.is_draft else None,
            corrected_by=FunderReport.objects.filter(supersedes=report).first(),
            history=report.history.select_related("history_user").order_by("-history_date")[:10] if manages else [],
        )
        return ctx


class FunderReportPartEditView(ObjectEditView):
    queryset = FunderReportPart.objects.select_related("report", "organization")
    form_class = FunderReportPartForm
    template_name = "funder/part_form.html"

    def get_object(self, queryset=None):
        part = super().get_object(queryset)
        if not part.report.is_draft:
            raise PermissionDenied(gettext("An issued report is frozen: a correction is a new version."))
        return part


class FunderReportIssueView(_ReportAction):
    def act(self, request, report):
        try:
            report = services.issue(report, request.user)
        except services.ReportError as exc:
            messages.error(request, str(exc))
            return redirect(report.get_absolute_url())
        submissions.record(request, report)
        messages.success(request, gettext("Issued. Content hash %(hash)s.") % {"hash": report.content_hash})
        return redirect(report.get_absolute_url())


class FunderReportSendView(_ReportAction):
    """POST: send an issued report to the funder's recipients (program managers), in the languages chosen. Once
    per submission: a double click sends one e-mail."""

    def act(self, request, report):
        form = SendForm(request.POST)
        if not form.is_valid():
            messages.error(request, gettext("Choose the language(s) to send."))
            return redirect(report.get_absolute_url())
        try:
            sent = sending.send(report, request.user, form.cleaned_data["languages"],
                                superseded_ok=form.cleaned_data["superseded_ok"], note=form.cleaned_data["note"])
        except sending.SendError as exc:
            messages.error(request, str(exc))
            return redirect(report.get_absolute_url())
        submissions.record(request, sent, report.get_absolute_url() + "#sendings")
        messages.success(request, gettext("Queued to %(recipients)s: the e-mail leaves as soon as the mail queue "
                                          "takes it.") % {"recipients": ", ".join(sent.recipients)})
        return redirect(report.get_absolute_url() + "#sendings")


class FunderReportCorrectView(_ReportAction):
    def act(self, request, report):
        form = CorrectForm(request.POST)
        try:
            draft = services.correct(report, request.user, form.data.get("note", "") if not form.is_valid()
                                     else form.cleaned_data["note"])
        except services.ReportError as exc:
            messages.error(request, str(exc))
            return redirect(report.get_absolute_url())
        submissions.record(request, draft)
        messages.success(request, gettext("Version %(number)s drafted.") % {"number": draft.version})
        return redirect(draft.get_absolute_url())


class FunderReportCommentView(ObjectActionView):
    queryset = FunderReportPart.objects.select_related("report")
    once = True

    def refuse(self, part):
        if not access.can_in_organization(self.request.user, access.CHANGE, FunderReportComment, part.organization_id):
            raise PermissionDenied(gettext("You may read this part but not comment on it."))

    def act(self, request, part):
        form = CommentForm(request.POST)
        if not form.is_valid():
            messages.error(request, gettext("Write a comment first."))
            return redirect(part.get_absolute_url())
        comment = services.comment(part, request.user, form.cleaned_data["text"])
        submissions.record(request, comment, part.get_absolute_url())
        return redirect(part.get_absolute_url())


def _download(request, pk: int, kind: str) -> HttpResponse:
    report = get_object(request, FunderReport.objects.all(), access.APPROVE, MANAGES, pk=pk)
    language = exports.language_of(request.GET.get("lang"))
    data = services.export_content(report, request.user)
    body, content_type, ext = ((exports.pdf(data, language), "application/pdf", "pdf") if kind == "pdf"
                               else (exports.workbook(data, language), CONTENT_TYPE, "xlsx"))
    response = HttpResponse(body, content_type=content_type)
    state = "" if not report.is_draft else "-draft"
    response["Content-Disposition"] = (f'attachment; filename="funder-report-{report.period_end:%Y-%m-%d}'
                                       f'-v{report.version}{state}-{language}.{ext}"')
    return response


def report_pdf(request, pk: int):
    return _download(request, pk, "pdf")


def report_xlsx(request, pk: int):
    return _download(request, pk, "xlsx")


def _part_download(request, pk: int, kind: str) -> HttpResponse:
    """One organization's part (its people's download): only a part the reader may see, nothing of the program's."""
    part = get_object(request, FunderReportPart.objects.select_related("report", "organization"), pk=pk)
    report, language = part.report, exports.language_of(request.GET.get("lang"))
    data = services.part_content(report, part, request.user)
    body, content_type, ext = ((exports.pdf(data, language), "application/pdf", "pdf") if kind == "pdf"
                               else (exports.workbook(data, language), CONTENT_TYPE, "xlsx"))
    response = HttpResponse(body, content_type=content_type)
    state = "" if not report.is_draft else "-draft"
    response["Content-Disposition"] = (f'attachment; filename="funder-report-{report.period_end:%Y-%m-%d}'
                                       f'-v{report.version}{state}-{part.organization.slug}-{language}.{ext}"')
    return response


def part_pdf(request, pk: int):
    return _part_download(request, pk, "pdf")


def part_xlsx(request, pk: int):
    return _part_download(request, pk, "xlsx")
