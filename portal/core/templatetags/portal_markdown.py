"""``{% load portal_markdown %}{{ text|markdown }}``: Markdown rendered and sanitized."""
from django import template
from django.utils.translation import gettext

from portal.core.markdown import render

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text):
    return render(text)


@register.filter
def duration(value):
    """A timedelta as '3 d 4 h', '5 h 12 min' or '40 min', in the reader's language ('3日4時間', '40分')."""
    if value is None:
        return "—"
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return gettext("%(days)s d %(hours)s h") % {"days": days, "hours": hours}
    if hours:
        return gettext("%(hours)s h %(minutes)s min") % {"hours": hours, "minutes": minutes}
    return gettext("%(minutes)s min") % {"minutes": minutes}
