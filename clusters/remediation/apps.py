"""Node remediation acts on a cluster through the organization's role: an app of its own (label ``remediation``)
because it has its own models, pages, API and worker, and reaches health and clusters through their models."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemediationConfig(AppConfig):
    name = "clusters.remediation"
    label = "remediation"
    verbose_name = _("Node remediation")

    def ready(self) -> None:
        # deferred: the services, tasks and sections import the models, which load once the app registry is ready
        from clusters.health.faults import links
        from clusters.remediation import fault_links, services, tasks
        from clusters.remediation import sections as remediation_sections
        from portal.core import notifications, sections, signals

        signals.cycle_archived.connect(services.on_cycle_archived, dispatch_uid="remediation.close_archived")
        if tasks.on_event not in notifications.LISTENERS:
            notifications.LISTENERS.append(tasks.on_event)
        links.REMEDIATING.provide(fault_links.remediating_action)
        services.KIND.provide(tasks.REMEDIATION)
        sections.register(sections.LEAD_HOME, "remediation/htmx/lead_failed.html",
                          remediation_sections.lead_failed_section, order=5)
