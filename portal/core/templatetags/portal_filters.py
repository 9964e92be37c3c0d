"""The filter panel's summary: how many filters the page is shown with, so that a panel folded on a phone does not
hide why the list is short."""
from __future__ import annotations

from django import template

register = template.Library()

NOT_FILTERS = {"page", "sort", "o", "export", "window"}


@register.simple_tag(takes_context=True)
def filters_set(context) -> int:
    """The query's parameters that filter the list (a value given), from the page's request."""
    request = context.get("request")
    if request is None:
        return 0
    return sum(1 for name in request.GET if name not in NOT_FILTERS and any(v.strip() for v in request.GET.getlist(name)))
