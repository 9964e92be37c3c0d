"""``{{ cluster|cluster_error:request.user }}``: provider errors as the user may read them
(see portal/core/provider_errors.py)."""
from django import template

from portal.core import provider_errors

register = template.Library()


@register.filter
def cluster_error(cluster, user) -> str:
    return provider_errors.cluster_error(cluster, user)


@register.filter
def support_sync_error(interaction, user) -> str:
    return provider_errors.support_sync_error(interaction, user)


@register.filter
def job_error(job, cluster_or_user) -> str:
    """``{{ job|job_error:request.user }}`` (the job's cluster gives the organization)."""
    return provider_errors.job_error(job, job.cluster.organization_id, cluster_or_user)
