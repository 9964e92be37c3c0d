"""``{% load portal_markdown %}{{ text|markdown }}``: Markdown rendered and sanitized."""
from django import template

from portal.markdown import render

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text):
    return render(text)


@register.filter
def duration(value):
    """A timedelta as '3 d 4 h', '5 h 12 min' or '40 min'."""
    if value is None:
        return "—"
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min"
