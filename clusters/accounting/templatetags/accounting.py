"""``{% cluster_accounting cluster %}``: the cluster page's accelerator-hours, without a view of its own;
``{% forecast_rows forecast %}``: the forecast table's rows, on the organization page and in the weekly review."""
from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

from clusters.accounting.sections import cluster_section
from portal.core.templatetags.portal_display import whole_number

register = template.Library()


@register.inclusion_tag("accounting/cluster_section.html")
def cluster_accounting(cluster) -> dict:
    return {"section": cluster_section(cluster)}


@register.simple_tag
def forecast_rows(forecast: dict | None, name: str = "") -> str:
    """The forecast table's rows of one organization (``clusters.accounting.forecast``): its reservations, then
    its quotas, with the organization's name in a first column when ``name`` is given.

    Built in Python rather than by an included template per row: the weekly review prints every organization's
    rows, and a template include per row cost more than the database spends on the figures (bench/review.py).
    Every value goes through ``conditional_escape``; numbers are shown as the template's ``floatformat:0`` showed them.
    """
    if not forecast:
        return ""
    head = format_html('<th scope="row">{}</th>', name) if name else ""
    runs_out = conditional_escape(forecast.get("runs_out") or "—")
    out = []
    for e in (*forecast.get("reservations", ()), *forecast.get("quotas", ())):
        share = "" if e.get("share") is None else f" ({round(float(e['share']) * 100)} %)"
        out.append(
            f"<tr>{head}<td>{conditional_escape(e.get('name', ''))}</td><td>{conditional_escape(e.get('end', ''))}</td>"
            f"<td>{whole_number(e.get('allocated'))}</td><td>{whole_number(e.get('delivered'))}</td>"
            f"<td>{whole_number(e.get('by_end'))}{share}</td><td>{runs_out}</td></tr>"
        )
    return mark_safe("".join(out))  # noqa: S308 -- every value above is escaped or a formatted number
