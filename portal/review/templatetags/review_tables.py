"""The overview's big tables (a row per organization, its accelerator-hours; tags × organizations), rendered in
Python.

At 120 organizations these tables hold thousands of cells; the template engine spends more time on them than
the database spends on every figure (see bench/review.py), so they are built here with ``escape`` on every
value. The markup matches the rest of the page's templates.
"""
from __future__ import annotations

import json
from html import escape as _html_escape

from django import template
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

from portal.core.templatetags.portal_display import code_label, local_day, money, whole_number
from portal.review.figures.texts import health_text, validation_text

register = template.Library()

SLUG = "__slug__"


def escape(value) -> str:
    """HTML-escape (quotes included), without django.utils.html.escape's lazy-string wrapper: these tables
    escape thousands of values per page."""
    return _html_escape(str(value), quote=True)


def _dash(value) -> str:
    return "—" if value in (None, "", [], {}) else escape(value)


@register.simple_tag
def organization_rows(organizations: list[dict]) -> str:
    url = reverse("portal:organization_detail", kwargs={"slug": SLUG})
    out = []
    for o in organizations:
        states = " ".join(f'<span class="state state-{escape(s)}">{escape(code_label(s))} {n}</span>'
                          for s, n in o["clusters"].items()) or escape(gettext("none"))
        opened = o["open"]
        expiring = o["expiring"]
        oldest = ("—" if o["oldest_open_days"] is None
                  else escape(gettext("%(days)s d") % {"days": o["oldest_open_days"]}))
        ending = (escape(gettext("%(count)s (next %(day)s)") % {"count": expiring["count"], "day": expiring["next"]})
                  if expiring["count"] else "—")
        out.append(
            "<tr>"
            f'<th scope="row"><a href="{escape(url.replace(SLUG, o["slug"]))}">{escape(o["name"])}</a></th>'
            f'<td>{_dash("; ".join(w["name"] for w in o["workloads"]))}</td>'
            f'<td>{_dash(", ".join(o["leads"]))}</td>'
            f"<td>{states}</td>"
            f'<td>{_dash(health_text(o))}</td>'
            f'<td>{_dash(validation_text(o))}</td>'
            f'<td>{opened.get("critical", 0)} / {opened.get("high", 0)} / {opened.get("normal", 0)} / '
            f'{opened.get("low", 0)}</td>'
            f"<td>{oldest}</td>"
            f'<td>{_dash(local_day(o["last_contact"]))}</td>'
            f'<td>{o["quota_used"]} / {o["quota_total"]}</td>'
            f"<td>{ending}</td>"
            "</tr>"
        )
    if not out:
        out.append(f'<tr><td colspan="11">{escape(gettext("No organizations."))}</td></tr>')
    return mark_safe("\n".join(out))  # noqa: S308 (every value above is escaped or a number)


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


@register.simple_tag
def heatmap_rows(rows: list[dict]) -> str:
    out = []
    for row in rows:
        cells = []
        for c in row["cells"]:
            text = ""
            if c["count"] or c["previous"]:
                text = str(c["count"]) + (f" <small>({_signed(c['delta'])})</small>" if c["delta"] else "")
            title = escape(gettext("%(now)s now, %(before)s before") % {"now": c["count"], "before": c["previous"]})
            cells.append(f'<td class="heat heat-{c["level"]}" title="{title}">{text}</td>')
        out.append(f'<tr><th scope="row">{escape(gettext(row["name"]))}</th>{"".join(cells)}<td><strong>{row["total"]}</strong>'
                   f'</td><td>{_signed(row["delta"])}</td><td>{row["organizations"]}</td></tr>')
    return mark_safe("\n".join(out))  # noqa: S308 (every value above is escaped or a number)


@register.simple_tag
def capacity_rows(organizations: list[dict], departed: list[dict] | None = None) -> str:
    """The accelerator-hours table: a row per organization that reserved or held any or cost something (the
    program's total is the sum of exactly these rows), then those that took part in the window and left when a
    cycle started; goodput as a percentage, costs to the cent with the days they cover, figures grouped for the
    reader's language, "—" where there are none. A frozen week's figures may predate a column: it shows empty."""
    out = []
    for o in [*organizations, *(departed or [])]:
        if not (o.get("gpu_hours_reserved") or o.get("gpu_hours_held") or o.get("cost_usd")):
            continue
        hours = "".join(f"<td>{whole_number(o.get(f'gpu_hours_{key}'))}</td>"
                        for key in ("reserved", "held", "healthy", "busy"))
        goodput = "—" if o.get("goodput") is None else f"{round(float(o['goodput']) * 100)} %"
        cost = money(o.get("cost_usd")) or "—"
        if o.get("cost_from"):
            cost += f' <small>({escape(o["cost_from"])} – {escape(o["cost_to"])})</small>'
        per_hour = money(o.get("cost_per_busy_gpu_hour")) or "—"
        name = escape(o.get("name", ""))
        if o.get("departed"):
            name += f" <small>({escape(gettext('left the program'))})</small>"
        out.append(f'<tr><th scope="row">{name}</th>{hours}<td>{goodput}</td><td>{cost}</td><td>{per_hour}</td>'
                   f'<td>{o.get("reservations_flagged") or ""}</td></tr>')
    return mark_safe("".join(out))  # noqa: S308 (every value above is escaped or a number)


@register.filter
def to_json(value) -> str:
    """JSON text for a ``data-*`` attribute (autoescaping then escapes its quotes). Chart data travels in
    attributes rather than ``<script type="application/json">`` blocks: every script tag on a page must be
    external or carry the CSP nonce."""
    return json.dumps(value, separators=(",", ":"))
