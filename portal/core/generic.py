"""Base views: every page gets its rows through the access policy, so none can forget it.

An app declares ``queryset``, templates and (optionally) a filterset; the base classes restrict the
queryset for the signed-in user, switch to the htmx partial when htmx asks, and export CSV.
"""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext
from django.views import generic
from django.views.generic.detail import SingleObjectMixin

from portal.core import access, submissions, versions
from portal.core.csv import csv_response


def get_object(request, queryset, action: str = access.VIEW, refusal: str | None = None, **lookup):
    """The one object a page or an action is about: looked up among the rows the user may see (another
    organization's is a 404, never a hint that it exists), then it must allow ``action`` (a 403 with
    ``refusal``, or the policy's reason). Function views and the bases below share this lookup."""
    obj = get_object_or_404(queryset.all().restrict(request.user, access.VIEW), **lookup)
    if action != access.VIEW and not access.can(request.user, action, obj):
        raise PermissionDenied(refusal or access.refusal(obj, action))
    return obj


class RestrictedQuerysetMixin:
    """Rows come from ``queryset.restrict(user, action)``; nothing else reaches the template."""

    action = access.VIEW
    queryset = None

    def get_queryset(self):
        if self.queryset is None:
            raise NotImplementedError(f"{type(self).__name__} must declare a queryset")
        return self.queryset.all().restrict(self.request.user, self.action)

    def visible(self, queryset, action: str = access.VIEW):
        """Rows of another model shown beside the page's own (an object's children, a count on a list):
        restricted for the same user, each row under its own model's rule."""
        return queryset.all().restrict(self.request.user, action)


class HtmxTemplateMixin:
    """One view serves the page and its htmx partial (``partial_template_name``)."""

    partial_template_name: str | None = None

    def get_template_names(self):
        if self.partial_template_name and getattr(self.request, "htmx", False) and not self.request.htmx.boosted:
            return [self.partial_template_name]
        return super().get_template_names()


class ObjectListView(RestrictedQuerysetMixin, HtmxTemplateMixin, generic.ListView):
    """A filtered, paginated list; ``?export=csv`` streams the same rows as CSV."""

    filterset_class = None
    paginate_by = 50
    csv_fields: tuple[tuple[str, str], ...] = ()  # (header, attribute path)
    csv_filename = "export.csv"

    def get_queryset(self):
        qs = super().get_queryset()
        self.filterset = None
        if self.filterset_class is not None:
            self.filterset = self.filterset_class(self.request.GET or None, queryset=qs, request=self.request)
            qs = self.filterset.qs
        return qs

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["filterset"] = self.filterset
        ctx["csv_enabled"] = bool(self.csv_fields)
        # Lists of rows that belong to a program cycle (a filterset with the cycle filter): the cycle asked for
        # (None: the active one), and whether it is archived (templates then offer no edit or launch buttons).
        ctx["cycle"] = getattr(self.filterset, "chosen_cycle", None)
        ctx["cycle_read_only"] = getattr(self.filterset, "read_only", False)
        return ctx

    def get(self, request, *args, **kwargs):
        if request.GET.get("export") == "csv" and self.csv_fields:
            return self.export_csv()
        return super().get(request, *args, **kwargs)

    def export_csv(self):
        rows = (
            [_resolve(obj, path) for _, path in self.csv_fields]
            for obj in self.get_queryset().iterator(chunk_size=2000)
        )
        return csv_response(self.csv_filename, [h for h, _ in self.csv_fields], rows)


def _resolve(obj, path: str):
    value = obj
    for part in path.split("."):
        value = getattr(value, part, None)
        if callable(value):
            value = value()
        if value is None:
            return ""
    return value


class ObjectView(RestrictedQuerysetMixin, HtmxTemplateMixin, generic.DetailView):
    """A single object the user may see; anything else is a 404, never a hint that it exists."""


class RestrictedObjectMixin(RestrictedQuerysetMixin, SingleObjectMixin):
    """One object from ``queryset`` by the URL's pk (or slug): see :func:`get_object`. ``action`` is what the
    view does with it (VIEW: only looked up); ``refusal`` the words of the 403; ``refuse(obj)`` a further rule;
    ``lookup_queryset()`` the queryset it is looked up in, when the object needs more than ``queryset`` (an
    annotation for the user), still restricted by the lookup."""

    refusal: str | None = None

    def lookup_queryset(self):
        return self.queryset

    def get_object(self, queryset=None):
        if self.queryset is None:
            raise NotImplementedError(f"{type(self).__name__} must declare a queryset")
        if self.kwargs.get(self.pk_url_kwarg) is not None:
            lookup = {"pk": self.kwargs[self.pk_url_kwarg]}
        else:
            lookup = {self.get_slug_field(): self.kwargs[self.slug_url_kwarg]}
        obj = get_object(self.request, self.lookup_queryset(), self.action, self.refusal, **lookup)
        self.refuse(obj)
        return obj

    def refuse(self, obj) -> None:
        """Raise ``PermissionDenied`` for a rule beyond the action (a reviewer's own assignment, a draft only)."""


class ObjectPageView(RestrictedObjectMixin, generic.View):
    """A page about one object with its own ``get``/``post`` (a form that is not the object's ModelForm): the
    object is ``self.object`` before either runs."""

    def dispatch(self, request, *args, **kwargs):
        if request.method.lower() in self.http_method_names and hasattr(self, request.method.lower()):
            self.object = self.get_object()  # a method the view lacks stays a 405, looked up or not
        return super().dispatch(request, *args, **kwargs)


class ObjectActionView(RestrictedObjectMixin, generic.View):
    """A POST that acts on one object (approve, cancel, submit): the object is looked up, checked for ``action``,
    and handed to ``act(request, obj)``, which answers. ``once``: one answer per submission key
    (``portal.core.submissions``), the lookup inside its transaction. A GET is a 405."""

    once = False

    def post(self, request, *args, **kwargs):
        if self.once:
            return submissions.once(type(self)._act)(self, request, *args, **kwargs)
        return self._act(request, *args, **kwargs)

    def _act(self, request, *args, **kwargs):
        self.object = self.get_object()
        return self.act(request, self.object)

    def act(self, request, obj):
        raise NotImplementedError


class ObjectEditView(RestrictedQuerysetMixin, HtmxTemplateMixin, generic.UpdateView):
    """Create (no pk in the URL) or change an object the policy lets the user change.

    The object to change is looked up among the rows the user may see, then must also be
    changeable (403 otherwise). A new object's organization must be one the user may write in; the
    check runs again inside the transaction that saves it.
    """

    action = access.CHANGE
    form_takes_user = False  # the form's __init__ takes ``user`` (to offer only the choices the user may make)
    create_refusal: str | None = None  # set: a user who may write in no organization is refused the create form

    def dispatch(self, request, *args, **kwargs):
        if self.create_refusal and kwargs.get(self.pk_url_kwarg) is None and kwargs.get(self.slug_url_kwarg) is None \
                and request.user.is_authenticated \
                and access.organization_ids(request.user, self.action, self.queryset.model) == frozenset():
            raise PermissionDenied(self.create_refusal)
        return super().dispatch(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        """A create is once per submission key (``portal.core.submissions``); an edit is not keyed."""
        if self.kwargs.get(self.pk_url_kwarg) is None and self.kwargs.get(self.slug_url_kwarg) is None:
            return submissions.once(super().post)(request, *args, **kwargs)
        return super().post(request, *args, **kwargs)

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        if self.form_takes_user:
            kwargs["user"] = self.request.user
        return kwargs

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        versions.add_field(form, self.object)  # an edit carries the version it was read at
        return form

    def get_object(self, queryset=None):
        if self.kwargs.get(self.pk_url_kwarg) is None and self.kwargs.get(self.slug_url_kwarg) is None:
            return None
        try:
            obj = super().get_object(self.queryset.all().restrict(self.request.user, access.VIEW))
        except Http404:
            raise
        if not access.can(self.request.user, self.action, obj):
            raise PermissionDenied(access.refusal(obj, self.action))
        return obj

    def organization_id_for(self, obj) -> int | None:
        """The organization a new or changed object belongs to (override for indirect paths)."""
        return getattr(obj, "organization_id", None)

    def form_valid(self, form):
        with transaction.atomic():
            changes = versions.conflict(form, self.object)  # locks the row being changed
            if changes is not None:
                return self.version_conflict(form, changes)
            obj = form.save(commit=False)
            created = obj.pk is None
            if not access.can_in_organization(
                self.request.user, self.action, type(obj), self.organization_id_for(obj)
            ):
                raise PermissionDenied(gettext("You may not write in this organization."))
            self.refuse_archived(obj)
            obj.save()
            form.save_m2m()
            self.object = obj
            self.after_save(obj, created=created)
            submissions.record(self.request, obj)
        messages.success(self.request, gettext("Saved %(object)s.") % {"object": obj})
        if getattr(self.request, "htmx", False):
            response = HttpResponse(status=204)
            response["HX-Location"] = self.get_success_url()
            return response
        return redirect(self.get_success_url())

    def after_save(self, obj, created: bool) -> None:
        """Hook for timeline entries and notifications, inside the saving transaction."""

    def version_conflict(self, form, changes):
        """The row changed since the form was read: nothing is saved, the page lists what changed meanwhile
        and offers the user's values again on the stored row's version, so saving re-applies them knowingly."""
        stored = form.current_instance
        kwargs = self.get_form_kwargs()
        kwargs.update(data=versions.reapply_data(form, stored), instance=stored)
        again = self.get_form_class()(**kwargs)
        versions.add_field(again, stored)
        self.object = stored
        status = 200 if getattr(self.request, "htmx", False) else 409  # htmx swaps 2xx answers only
        return self.render_to_response(self.get_context_data(form=again, version_conflict=changes), status=status)

    def refuse_archived(self, obj) -> None:
        """A row written under an archived cycle (a new change request on an archived quota) is refused with the
        reason; an existing row of one was already refused by the policy before the form."""
        access.refuse_archived(obj, self.action)

    def get_success_url(self):
        return self.object.get_absolute_url()


class ObjectDeleteView(RestrictedQuerysetMixin, generic.DeleteView):
    action = access.CHANGE

    def get_object(self, queryset=None):
        obj = super().get_object(self.queryset.all().restrict(self.request.user, access.VIEW))
        if not access.can(self.request.user, self.action, obj):
            reason = access.refusal(obj, self.action)
            raise PermissionDenied(gettext("You may view this but not delete it.")
                                   if reason == gettext("You may view this but not change it.") else reason)
        return obj
