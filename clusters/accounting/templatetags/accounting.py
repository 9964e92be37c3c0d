"""``{% cluster_accounting cluster %}``: the cluster page's accelerator-hours, without a view of its own."""
from django import template

from clusters.accounting.sections import cluster_section

register = template.Library()


@register.inclusion_tag("accounting/cluster_section.html")
def cluster_accounting(cluster) -> dict:
    return {"section": cluster_section(cluster)}
