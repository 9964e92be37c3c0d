"""Interaction pages: the list, one interaction with its history, the full form, the quick log from
the organization page, comments, escalation, the AWS Support sync and tag suggestions."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.generic import TemplateView

from portal.core import access, jobs, submissions
from portal.core.generic import ObjectEditView, ObjectListView, ObjectPageView, ObjectView
from portal.core.models import Organization
from workloads.interactions import asking, hooks, services
from workloads.interactions.desk import search, tagging
from workloads.interactions.desk.forms import CommentForm, EscalateForm, InteractionForm, InteractionQuickForm
from workloads.interactions.desk.sections import organization_section
from workloads.interactions.desk.tasks import sync_case
from workloads.interactions.filtersets import InteractionFilterSet
from workloads.interactions.models import ChallengeTag, Interaction, InteractionComment

LIST_QUERYSET = Interaction.objects.select_related("organization", "owner").prefetch_related("tags")


class InteractionListView(ObjectListView):
    queryset = LIST_QUERYSET
    filterset_class = InteractionFilterSet
    template_name = "workloads/interactions/interaction_list.html"
    partial_template_name = "workloads/interactions/htmx/interaction_table.html"
    csv_fields = (
        ("Organization", "organization.name"), ("Occurred at", "occurred_at"), ("Kind", "get_kind_display"),
        ("Summary", "summary"), ("Status", "get_status_display"), ("Severity", "get_severity_display"),
        ("Owner", "owner.display_name"), ("Visibility", "visibility"), ("AWS support case", "support_case_id"),
    )
    csv_filename = "interactions.csv"

    def get_queryset(self):
        qs = super().get_queryset()
        if self.request.GET.get("ordering") != "oldest":
            return qs
        return qs.order_by("occurred_at", "id")

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["may_create"] = access.organization_ids(self.request.user, access.CHANGE, Interaction) != frozenset()
        return ctx


class InteractionView(ObjectView):
    queryset = Interaction.objects.select_related("organization", "owner", "created_by", "workload").prefetch_related(
        "tags", "watchers"
    )
    template_name = "workloads/interactions/interaction_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        obj, user = self.object, self.request.user
        ctx["history"] = (
            self.visible(InteractionComment.objects.filter(interaction=obj)).select_related("author")
        )
        ctx["can_change"] = access.can(user, access.CHANGE, obj)
        ctx["can_comment"] = access.can_in_organization(user, access.CHANGE, InteractionComment, obj.organization_id)
        ctx["sees_internal"] = access.sees_internal(user, obj.organization_id)
        ctx["comment_form"] = CommentForm()
        ctx["escalate_form"] = EscalateForm()
        ctx["escalations"] = hooks.ESCALATIONS_OF(user, obj)
        if ctx["can_change"]:
            chosen = {t.pk for t in obj.tags.all()}
            ctx["suggested_tags"] = [
                t for t in tagging.suggest(f"{obj.summary}\n{obj.body}") if t.pk not in chosen
            ]
        return ctx


class InteractionEditView(ObjectEditView):
    queryset = Interaction.objects.all()
    form_class = InteractionForm
    template_name = "workloads/interactions/interaction_form.html"
    form_takes_user = True
    create_refusal = _("You may not log interactions.")

    def dispatch(self, request, *args, **kwargs):
        """A customer opening the form is told how to ask instead (their Slack channel, their lead SA), not
        refused bare; the status stays 403."""
        if kwargs.get(self.pk_url_kwarg) is None and request.user.is_authenticated \
                and access.organization_ids(request.user, self.action, Interaction) == frozenset():
            ways = asking.ways_to_ask(request.user)
            if ways:
                return render(request, "workloads/interactions/ask_instead.html", {"ways": ways}, status=403)
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        if self.object is None and self.request.GET.get("organization"):
            # Opened for an organization (?organization=<slug>), or reloaded after choosing one (its id): the
            # form's choices are then that organization's, and what was typed so far is kept.
            raw = self.request.GET["organization"]
            orgs = self.visible(Organization.objects.all())
            org = (orgs.filter(pk=int(raw)) if raw.isdigit() else orgs.filter(slug=raw)).first()
            if org is not None:
                initial = kwargs.setdefault("initial", {})
                if self.request.htmx:
                    initial.update({k: v for k, v in self.request.GET.items()
                                    if k in ("kind", "summary", "body", "occurred_at", "status", "severity",
                                             "support_case_id", "resolution", "lesson", "visibility")})
                    initial["tags"] = self.request.GET.getlist("tags")
                initial["organization"] = org.pk
                initial.setdefault("owner", self.request.user.pk)
        if self.object is not None and self.request.GET.get("add_tag"):
            # A suggested tag clicked on the interaction's page: the edit form opens with it ticked.
            tags = [t.slug for t in self.object.tags.all()]
            if ChallengeTag.objects.filter(slug=self.request.GET["add_tag"]).exists():
                tags.append(self.request.GET["add_tag"])
            kwargs.setdefault("initial", {})["tags"] = tags
        if self.object is None and self.request.GET.get("summary"):  # e.g. opened from a GPU fault
            kwargs.setdefault("initial", {})["summary"] = self.request.GET["summary"][:200]
        return kwargs

    def get_object(self, queryset=None):
        obj = super().get_object(queryset)
        # Taken before the form copies its data onto the object.
        self._before = services.snapshot(obj) if obj is not None else None
        return obj

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def form_valid(self, form):
        if form.instance.pk is None:
            form.instance.created_by = self.request.user
        return super().form_valid(form)

    def after_save(self, obj, created):
        if created:
            services.created(obj, self.request.user)
        else:
            services.changed(obj, self._before, self.request.user)
        if obj.support_case_id:
            # A saved case id is synced after every save: one call, and the page shows a fresh status.
            jobs.send_on_commit(sync_case, obj.pk)


class QuickLogView(ObjectPageView):
    """GET: the quick-log form; POST: save it and answer with the refreshed open list and a fresh form."""

    queryset = Organization.objects.all()
    template_name = "workloads/interactions/htmx/interaction_quick_log.html"

    def refuse(self, organization):
        if not access.can_in_organization(self.request.user, access.CHANGE, Interaction, organization.pk):
            raise PermissionDenied(gettext("You may not log interactions for this organization."))

    @property
    def organization(self):
        return self.object

    def render_form(self, form, status=200, saved=None):
        section = organization_section(self.request, self.organization, form=form)
        context = {"section": section, "organization": self.organization, "saved": saved}
        if saved is not None:
            # The status section's open count sits elsewhere on the page: refreshed out of band.
            context["open_count"] = services.open_summary(self.request.user, self.organization)
        return render(self.request, self.template_name, context, status=status)

    def get(self, request, slug):
        return self.render_form(InteractionQuickForm())

    def replay_submission(self, request, earlier):
        """A repeat of a logged quick log answers as the first did: the list with it, and a fresh form."""
        if not request.htmx:
            return submissions.replay_page(request, earlier)
        saved = self.visible(Interaction.objects.filter(pk=earlier.object_id)).first()
        return self.render_form(InteractionQuickForm(), saved=saved)

    @submissions.once
    def post(self, request, slug):
        form = InteractionQuickForm(request.POST)
        if not form.is_valid():
            return self.render_form(form, status=422 if not request.htmx else 200)
        with transaction.atomic():
            obj = form.save(commit=False)
            obj.organization = self.organization
            obj.owner = request.user if access.sees_internal(request.user, self.organization.pk) else None
            obj.created_by = request.user
            obj.save()
            form.save_m2m()
            services.created(obj, request.user)
            submissions.record(request, obj, location=self.organization.get_absolute_url())
        if not request.htmx:
            messages.success(request, gettext("Logged %(object)s.") % {"object": obj})
            return redirect(self.organization.get_absolute_url())
        return self.render_form(InteractionQuickForm(), saved=obj)


class _InteractionAction(ObjectPageView):
    """POST-only actions on one interaction the user can see (each says what else it needs)."""

    queryset = Interaction.objects.select_related("organization")

    def require_change(self):
        if not access.can(self.request.user, access.CHANGE, self.object):
            raise PermissionDenied(gettext("You may view this interaction but not change it."))


class CommentView(_InteractionAction):
    @submissions.once
    def post(self, request, pk):
        obj = self.object
        if not access.can_in_organization(request.user, access.CHANGE, InteractionComment, obj.organization_id):
            raise PermissionDenied(gettext("You may not comment here."))
        form = CommentForm(request.POST)
        if not form.is_valid():
            messages.error(request, gettext("The comment is empty or too long."))
            return redirect(obj.get_absolute_url())
        internal = form.cleaned_data["internal"] and access.sees_internal(request.user, obj.organization_id)
        with transaction.atomic():
            entry = services.comment(obj, request.user, form.cleaned_data["body"], internal=internal)
            submissions.record(request, entry, location=obj.get_absolute_url() + "#history")
        messages.success(request, gettext("Comment added."))
        return redirect(obj.get_absolute_url() + "#history")


class EscalateView(_InteractionAction):
    @submissions.once
    def post(self, request, pk):
        self.require_change()
        form = EscalateForm(request.POST)
        if not form.is_valid():
            messages.error(request, gettext("Say why the interaction is escalated."))
            return redirect(self.object.get_absolute_url())
        with transaction.atomic():
            escalation = services.escalate(self.object, request.user, form.cleaned_data["reason"],
                                           form.cleaned_data["target"])
            submissions.record(request, escalation)
        messages.success(request, gettext("Escalated."))
        return redirect(self.object.get_absolute_url())


class SyncView(_InteractionAction):
    def post(self, request, pk):
        self.require_change()
        if not self.object.support_case_id:
            messages.error(request, gettext("This interaction has no AWS support case id."))
        elif jobs.send(sync_case, self.object.pk):
            messages.success(request, gettext("Sync with AWS Support started; reload in a moment."))
        else:
            # The periodic sync (every 15 minutes) of every open interaction with a case takes it then.
            messages.warning(request, gettext("The task queue is unreachable: the periodic sync of open cases takes it "
                                              "once the queue is back."))
        return redirect(self.object.get_absolute_url())


class TagSuggestView(View):
    """htmx: the tags an interaction's text suggests, as checkboxes the form can take."""

    def post(self, request):
        if not access.sees_internal(request.user) and not access.is_staff(request.user):
            raise PermissionDenied(gettext("Tag suggestions are for lead SAs."))
        text = f"{request.POST.get('summary', '')}\n{request.POST.get('body', '')}"[:100000]
        if not text.strip():
            return HttpResponse(gettext("Nothing to suggest tags from."), status=400)
        chosen = set(request.POST.getlist("tags"))
        tags = [t for t in tagging.suggest(text, ChallengeTag.objects.all()) if t.slug not in chosen]
        # Each suggestion is a <label> for the form's own checkbox (id_tags_<position>): one click ticks it.
        positions = {slug: i for i, slug in enumerate(ChallengeTag.objects.values_list("slug", flat=True))}
        for tag in tags:
            tag.checkbox_id = f"id_tags_{positions[tag.slug]}"
        return render(request, "workloads/interactions/htmx/interaction_tag_suggestions.html", {"suggested_tags": tags})

    def get(self, request):
        return HttpResponse(status=405)


class LessonSearchView(TemplateView):
    template_name = "workloads/interactions/interaction_lessons.html"

    def get(self, request, *args, **kwargs):
        if not search.may_search(request.user):
            raise PermissionDenied(gettext("Lessons learned are for lead SAs and program managers."))
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        q = self.request.GET.get("q", "")[:200]
        tag = self.request.GET.get("tag", "")[:64]
        results = list(search.lessons(self.request.user, q, tag)[:50])
        visible = access.organization_ids(self.request.user, access.VIEW, Interaction)
        for item in results:
            item.linkable = visible is None or item.organization_id in visible
        ctx.update(q=q, tag=tag, results=results, tags=ChallengeTag.objects.all())
        return ctx

