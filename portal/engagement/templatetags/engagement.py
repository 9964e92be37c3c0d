"""Template tags other apps' pages use to show engagement data without their views knowing about it."""
from django import template

from portal.engagement import grafana, services
from portal.engagement.choices import MilestoneKind

register = template.Library()


@register.inclusion_tag("engagement/htmx/open_by_target.html", takes_context=True)
def open_escalations_by_target(context):
    """The weekly review's open escalations by team, oldest first, as the viewer may see them."""
    request = context.get("request")
    return {"groups": services.open_by_target(request.user) if request is not None else []}


@register.inclusion_tag("engagement/htmx/outcomes_section.html")
def outcomes_table(rows, cycle_name=""):
    """The outcomes of the overview's (or a frozen review's) figures: one cycle's (named when known)."""
    return {"rows": rows or [], "kinds": MilestoneKind.choices, "cycle_name": cycle_name or ""}


@register.inclusion_tag("engagement/htmx/grafana_links.html", takes_context=True)
def grafana_links(context, cluster):
    """The organization's Grafana dashboards, for a cluster's health page."""
    request = context.get("request")
    return {"workspaces": grafana.workspaces(request.user, cluster.organization) if request is not None else []}
