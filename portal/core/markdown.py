"""Markdown for text people write (interaction bodies, comments): rendered, then sanitized.

Markdown passes raw HTML through, so the output is cleaned with nh3 (the Rust ``ammonia`` sanitizer):
an allow-list of tags and attributes, links only to http, https and mailto, and every link gets
``rel="noopener noreferrer"``. Script tags, event handlers and ``javascript:`` URLs never survive.
"""
from __future__ import annotations

import markdown as markdown_lib
import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "b", "i", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "del", "sup", "sub",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "code": {"class"}}
URL_SCHEMES = {"http", "https", "mailto"}
EXTENSIONS = ["fenced_code", "tables", "sane_lists"]


def render(text: str | None) -> SafeString:
    """Markdown → sanitized HTML, safe to put in a template as is."""
    if not text:
        return mark_safe("")
    html = markdown_lib.markdown(text, extensions=EXTENSIONS, output_format="html")
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
    return mark_safe(cleaned)  # noqa: S308 - sanitized by nh3 just above
