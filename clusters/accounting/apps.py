"""Capacity accounting: how much of the capacity an organization reserved became held, healthy and busy."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountingConfig(AppConfig):
    name = "clusters.accounting"
    label = "accounting"
    verbose_name = _("Capacity accounting")

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from clusters.accounting import sections as accounting_sections  # the sections read the app's models
        from clusters.accounting import thresholds
        from clusters.health.faults import stalls
        from portal.core import sections

        sections.register(sections.ORGANIZATION_PAGE, "accounting/org_section.html",
                          accounting_sections.organization_section, order=55)
        sections.register(sections.LEAD_HOME, "accounting/lead_idle_section.html",
                          accounting_sections.lead_idle_section, order=45)
        stalls.STALL_MINUTES.provide(thresholds.stall_minutes)
