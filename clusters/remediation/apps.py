"""Node remediation acts on a cluster through the organization's role: an app of its own (label ``remediation``)
because it has its own models, pages, API and worker, and reaches health and clusters through their models."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemediationConfig(AppConfig):
    name = "clusters.remediation"
    label = "remediation"
    verbose_name = _("Node remediation")

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from clusters.remediation import sections as remediation_sections  # the section reads the app's models
        from portal import sections

        sections.register(sections.LEAD_HOME, "remediation/htmx/lead_failed.html",
                          remediation_sections.lead_failed_section, order=5)
