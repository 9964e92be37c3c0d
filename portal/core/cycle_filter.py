"""Lists filtered to a program cycle.

A filterset that adds ``CycleFilterMixin`` gets a ``cycle`` filter: without it (or with it empty) the list shows
the active cycle's rows; ``?cycle=<id>`` shows a past cycle's, which are read-only (the access policy refuses any
action but viewing on them). Pages, their htmx partials, CSV exports and API lists share it through their
filterset, the API schema documents it from there, and every filter bar shows it with
``engagement/htmx/cycle_select.html``.
"""
from __future__ import annotations

import django_filters
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from portal.core.api.filtering import IdFilter
from portal.core.choices import CycleStatus
from portal.core.models import Cycle, Organization


def cycles_for(request):
    """The cycles a user may pick: those their organizations took part in, and the active one."""
    visible = Organization.objects.restrict(getattr(request, "user", None))
    return Cycle.objects.filter(Q(participations__organization__in=visible) | Q(status=CycleStatus.ACTIVE)).distinct()


class CycleFilter(django_filters.ModelChoiceFilter):
    """``cycle=<id>``: that cycle's rows; empty: the active cycle's (``in_active_cycle``)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("queryset", cycles_for)
        kwargs.setdefault("label", _("Cycle"))
        kwargs.setdefault("empty_label", _("Active cycle"))
        kwargs.setdefault("help_text", _("A program cycle's id; without it, the active cycle."))
        super().__init__(**kwargs)

    def filter(self, qs, value):
        if value:
            return qs.filter(**{self.field_name: value})
        return in_active_cycle(qs, self.field_name)

    def id_filter(self, listing: bool = True) -> CycleIdFilter:
        """The API's form: a plain cycle id like every related-row filter (one the caller has no rows in answers
        an empty page), with the same default for lists (a past cycle's row stays reachable by its URL)."""
        return CycleIdFilter(field_name=self.field_name, label=self.label, help_text=self.extra.get("help_text"),
                             listing=listing)


class CycleIdFilter(IdFilter):
    def __init__(self, *args, listing: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.listing = listing

    def filter(self, qs, value):
        if value is None:
            return in_active_cycle(qs, self.field_name) if self.listing else qs
        return qs.none() if not -self.LIMIT <= value < self.LIMIT else qs.filter(**{f"{self.field_name}__pk": value})


def in_active_cycle(qs, field_name: str = "cycle"):
    """The rows of the active cycle (a join, not a look-up: no query of its own), and rows of no cycle (from before
    the program had cycles)."""
    return qs.filter(Q(**{f"{field_name}__status": CycleStatus.ACTIVE}) | Q(**{f"{field_name}__isnull": True}))


class CycleFilterMixin(django_filters.FilterSet):
    """Adds the ``cycle`` filter: the rows shown belong to the active cycle, or to ``chosen_cycle``."""

    cycle = CycleFilter()

    @property
    def chosen_cycle(self) -> Cycle | None:
        """The cycle asked for, when the request names a valid one (None: the active cycle)."""
        if self.is_bound and self.is_valid():
            return self.form.cleaned_data.get("cycle")
        return None

    @property
    def read_only(self) -> bool:
        """The rows shown belong to an archived cycle: no edit, launch or create buttons."""
        return self.chosen_cycle is not None and self.chosen_cycle.is_archived

    @property
    def qs(self):
        if not hasattr(self, "_qs"):
            qs = super().qs
            if not self.is_bound or "cycle" not in self.form.cleaned_data:  # no data, or a bad cycle: the default
                qs = self.filters["cycle"].filter(qs, None)
            self._qs = qs
        return self._qs
