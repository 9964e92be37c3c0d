"""Pages of the weekly review: the live program overview, frozen reviews, their exports.

Program managers (and staff) only: everyone else gets 403 before any figure is computed.
"""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from portal.core import access, submissions
from portal.core.generic import ObjectListView, get_object
from portal.engagement import carry
from portal.review import exports, figures, services
from portal.review.filtersets import WeeklyReviewFilterSet
from portal.review.forms import ActionItemForm, NotesForm
from portal.review.models import ActionItem, WeeklyReview, week_start_of
from workloads.choices import RequestStatus
from workloads.models import QuotaChangeRequest


def require_program_manager(user) -> None:
    if not (access.is_program_manager(user) or access.is_staff(user)):
        raise PermissionDenied(gettext("The weekly review is for program managers."))


def _live(request) -> dict:
    return figures.overview(request.user, window=figures.clean_window(request.GET.get("window")))


@require_GET
def overview(request):
    """The program overview (``review:overview``): live figures for every organization."""
    require_program_manager(request.user)
    data = _live(request)
    return render(request, "review/overview.html", {
        "figures": data, "windows": (7, 14, 28, 56, 91), "tables": exports.TABLES,
        # restrict: the frozen review of the week shown, beside the live figures (a function view's own row)
        "current_frozen": WeeklyReview.objects.restrict(request.user).filter(week_start=data["week_start"]).first(),
        "pending_requests": _pending_quota_requests(request.user),
        "wind_down": _wind_down(request.user),
    })


def _wind_down(user) -> list:
    """What organizations that left the program still hold in an archived cycle (the overview lists it so that
    it is ended, not forgotten: the figures count the active cycle's organizations only)."""
    return carry.wind_down_rows(user)


def _pending_quota_requests(user) -> int:
    """Quota requests waiting for a program manager's decision (the overview links them)."""
    return QuotaChangeRequest.objects.restrict(user).filter(status=RequestStatus.PENDING).count()  # restrict: a count


@require_GET
def overview_csv(request, table: str):
    require_program_manager(request.user)
    if table not in exports.TABLES:
        raise Http404("No such table.")
    data = figures.table_figures(request.user, table, window=figures.clean_window(request.GET.get("window")))
    return exports.csv_of(data, table, "overview")


@require_GET
def overview_xlsx(request):
    """The overview's tables in one workbook, as its CSVs with the same heat-map window."""
    require_program_manager(request.user)
    data = _live(request)
    return exports.workbook_of(data, f"overview-{timezone.localdate():%Y-%m-%d}")


class ReviewListView(ObjectListView):
    """The frozen reviews (program managers), newest first, filtered by week and cycle."""

    queryset = WeeklyReview.objects.select_related("frozen_by").order_by("-week_start")
    filterset_class = WeeklyReviewFilterSet
    template_name = "review/review_list.html"
    context_object_name = "reviews"
    paginate_by = None
    http_method_names = ["get"]

    def dispatch(self, request, *args, **kwargs):
        require_program_manager(request.user)
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs, notes_form=NotesForm(), current_frozen=_current_frozen(self.request.user))


def _current_frozen(user) -> WeeklyReview | None:
    """This week's review when it is frozen already: the list then links to it instead of offering a freeze."""
    week = week_start_of(timezone.localdate())
    return WeeklyReview.objects.restrict(user).filter(week_start=week).first()  # restrict: one row beside a page


def _freeze_page(request, form: NotesForm, status: int = 200):
    """The confirmation step: what freezing stores and carries over, the notes, one button to confirm
    (an htmx dialog on the overview, a page of its own without htmx)."""
    template = "review/htmx/freeze_confirm.html" if request.htmx else "review/review_freeze.html"
    current = _current_frozen(request.user)
    return render(request, template, {"notes_form": form, "current_frozen": current,
                                      **({} if current else services.freeze_summary())}, status=status)


@require_http_methods(["GET", "POST"])
@submissions.once
def review_freeze(request):
    """Freeze this week: a GET (or a POST without ``confirm``, from a form that only typed notes) shows
    the confirmation; the confirmed POST freezes, once per submission key."""
    require_program_manager(request.user)
    if not access.can_in_organization(request.user, access.CHANGE, WeeklyReview, None):
        raise PermissionDenied(gettext("You may not freeze reviews."))
    if request.method == "GET":
        return _freeze_page(request, NotesForm())
    form = NotesForm(request.POST)
    if not form.is_valid():
        return _freeze_page(request, form, status=400)
    if not request.POST.get("confirm"):
        return _freeze_page(request, form)
    notes = form.cleaned_data["notes"]
    try:
        review = services.freeze(request.user, notes=notes)
    except services.AlreadyFrozen as exc:
        # Someone froze the week meanwhile (or a second tab): the notes typed are kept, added to that review.
        if notes.strip() and access.can(request.user, access.CHANGE, exc.review):
            services.append_notes(exc.review, notes)
            submissions.record(request, exc.review)
            messages.warning(request, gettext("%(refusal)s Your notes were added to it.") % {"refusal": exc})
        else:
            messages.error(request, str(exc))
        return _after_freeze(request, exc.review.get_absolute_url())
    submissions.record(request, review)
    messages.success(request, gettext("Froze the week of %(week)s.") % {"week": f"{review.week_start:%Y-%m-%d}"})
    return _after_freeze(request, review.get_absolute_url())


def _after_freeze(request, location: str):
    """To the frozen review: a redirect, or for the htmx dialog an ``HX-Location`` the page follows."""
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Location"] = location
        return response
    return redirect(location)


def _review(request, pk: int) -> WeeklyReview:
    require_program_manager(request.user)
    return get_object(request, WeeklyReview.objects.select_related("frozen_by"), pk=pk)


def _detail_context(review: WeeklyReview) -> dict:
    previous = services.previous_of(review)
    return {
        "review": review,
        "figures": review.figures,
        "previous": previous,
        "changes": figures.diff(previous.figures if previous else None, review.figures),
        "items": review.action_items.select_related("owner", "carried_from__review"),
        "tables": exports.TABLES,
    }


@require_GET
def review_detail(request, pk: int):
    review = _review(request, pk)
    ctx = _detail_context(review)
    ctx.update(notes_form=NotesForm(instance=review), item_form=ActionItemForm(),
               can_change=access.can(request.user, access.CHANGE, review))
    return render(request, "review/review_detail.html", ctx)


@require_GET
def review_print(request, pk: int):
    review = _review(request, pk)
    return render(request, "review/review_print.html", _detail_context(review))


def _writable(request, pk: int) -> WeeklyReview:
    require_program_manager(request.user)
    return get_object(request, WeeklyReview.objects.select_related("frozen_by"), access.CHANGE,
                      gettext("You may view this review but not change it."), pk=pk)


@require_POST
def review_notes(request, pk: int):
    review = _writable(request, pk)
    form = NotesForm(request.POST, instance=review)
    if not form.is_valid():
        ctx = _detail_context(review)
        ctx.update(notes_form=form, item_form=ActionItemForm(), can_change=True)
        return render(request, "review/review_detail.html", ctx, status=400)
    form.save()
    messages.success(request, gettext("Notes saved."))
    return redirect(review.get_absolute_url())


@require_POST
@submissions.once
def actionitem_add(request, pk: int):
    review = _writable(request, pk)
    form = ActionItemForm(request.POST)
    if not form.is_valid():
        ctx = _detail_context(review)
        ctx.update(notes_form=NotesForm(instance=review), item_form=form, can_change=True)
        return render(request, "review/review_detail.html", ctx, status=400)
    with transaction.atomic():
        item = form.save(commit=False)
        item.review = review
        item.save()
        submissions.record(request, item, location=review.get_absolute_url())
    messages.success(request, gettext("Added “%(title)s”.") % {"title": item.title})
    return redirect(review.get_absolute_url())


@require_POST
def actionitem_done(request, pk: int):
    require_program_manager(request.user)
    # restrict: an item the user may not change is a 404 here (its page is the review's), not a 403
    item = get_object_or_404(ActionItem.objects.restrict(request.user, access.CHANGE).select_related("review"), pk=pk)
    services.set_done(item, request.POST.get("done") == "1")
    if request.htmx:
        return render(request, "review/htmx/action_item.html", {"item": item, "can_change": True})
    return redirect(item.review.get_absolute_url())


@require_GET
def review_csv(request, pk: int, table: str):
    review = _review(request, pk)
    prefix = f"review-{review.week_start:%Y-%m-%d}"
    with translation.override("en"):  # a CSV's headers are its column names, its labels English
        if table == "changes":
            ctx = _detail_context(review)
            return exports.csv_response(f"{prefix}-changes.csv", *exports.changes_table(ctx["changes"]))
        if table == "action-items":
            items = review.action_items.select_related("owner")
            return exports.csv_response(f"{prefix}-action-items.csv", *exports.action_items_table(items))
    return exports.csv_of(review.figures, table, prefix)


@require_GET
def review_xlsx(request, pk: int):
    """A frozen review in one workbook: its action items and changes, then every table of the snapshot."""
    review = _review(request, pk)
    ctx = _detail_context(review)
    return exports.workbook_of(review.figures, f"review-{review.week_start:%Y-%m-%d}", first=(
        (gettext("Action items"), exports.action_items_table(ctx["items"])),
        (gettext("Changes since previous review"), exports.changes_table(ctx["changes"])),  # 31 characters at most
    ))


@require_GET
def review_pdf(request, pk: int):
    review = _review(request, pk)
    ctx = _detail_context(review)
    return exports.pdf_response(review, ctx["changes"], ctx["items"])
