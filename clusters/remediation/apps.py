"""Node remediation acts on a cluster through the organization's role: an app of its own (label ``remediation``)
because it has its own models, pages, API and worker, and reaches health and clusters through their models."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemediationConfig(AppConfig):
    name = "clusters.remediation"
    label = "remediation"
    verbose_name = _("Node remediation")
