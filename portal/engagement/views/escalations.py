"""Escalation pages: the list (a specialist's work queue, a lead SA's and the program's), one escalation
with the transitions the user may take, and the transition itself (POST)."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect
from django.utils.translation import gettext, gettext_lazy

from portal.core import access, submissions
from portal.core.generic import ObjectActionView, ObjectListView, ObjectView
from portal.engagement import services
from portal.engagement.filtersets import EscalationFilterSet
from portal.engagement.forms import TransitionForm
from portal.engagement.models import Escalation

QUERYSET = Escalation.objects.select_related("target", "assignee", "requested_by", "interaction__organization")


def may_see_escalations(user) -> bool:
    """Everyone but customers: a customer-only user is refused outright rather than shown an empty list."""
    return bool(access.is_staff(user) or access.is_program_manager(user) or access.teams(user)
                or access.led_organizations(user))


class EscalationListView(ObjectListView):
    queryset = QUERYSET
    filterset_class = EscalationFilterSet
    template_name = "engagement/escalation_list.html"
    partial_template_name = "engagement/htmx/escalation_table.html"
    csv_fields = (
        ("Organization", "interaction.organization.name"), ("Interaction", "interaction.summary"),
        ("Target", "target.name"), ("State", "get_state_display"), ("Assignee", "assignee.username"),
        ("Requested at", "requested_at"), ("Answered at", "answered_at"), ("Closed at", "closed_at"),
    )
    csv_filename = "escalations.csv"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not may_see_escalations(request.user):
            raise PermissionDenied(gettext("Escalations are internal."))
        return super().dispatch(request, *args, **kwargs)

    def get_queryset(self):
        # Open ones unless filtered, and the filter says so: the default is put in the query the form reads.
        if "open" not in self.request.GET and "state" not in self.request.GET:
            query = self.request.GET.copy()
            query["open"] = "true"
            self.request.GET = query
        return super().get_queryset()


class EscalationView(ObjectView):
    queryset = QUERYSET
    template_name = "engagement/escalation_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["transitions"] = services.allowed_transitions(self.request.user, self.object)
        ctx["form"] = TransitionForm()
        return ctx


class EscalationTransitionView(ObjectActionView):
    """POST only: take one transition. 404 when the escalation is invisible, 403 when the user may not."""

    queryset = QUERYSET
    action = access.CHANGE
    refusal = gettext_lazy("You may view this escalation but not change it.")
    once = True

    def act(self, request, escalation):
        transition = self.kwargs["transition"]
        form = TransitionForm(request.POST)
        if not form.is_valid():
            messages.error(request, gettext("The answer is too long."))
            return redirect(escalation.get_absolute_url())
        try:
            with transaction.atomic():
                services.transition(escalation, request.user, transition, form.cleaned_data["answer"])
        except services.TransitionError as exc:
            if transition in services.TRANSITIONS and not services.allowed_by_role(request.user, escalation,
                                                                                   transition):
                raise PermissionDenied(str(exc)) from exc
            messages.error(request, str(exc))
            return redirect(escalation.get_absolute_url())
        submissions.record(request, escalation)
        messages.success(request, gettext("Escalation %(state)s.") % {"state": escalation.get_state_display().lower()})
        return redirect(escalation.get_absolute_url())
