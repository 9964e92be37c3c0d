"""Node remediation acts on a cluster through the organization's role: an app of its own (label ``remediation``)
because it has its own models, pages, API and worker, and reaches health and clusters through their models."""
from django.apps import AppConfig


class RemediationConfig(AppConfig):
    name = "clusters.remediation"
    label = "remediation"
    verbose_name = "Node remediation"
