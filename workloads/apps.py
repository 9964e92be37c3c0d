"""What each organization is doing: workloads, quotas and capacity, spend (interactions and enablement are apps of
their own inside this package)."""
from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"

    def ready(self) -> None:
        # deferred: these modules import models, which exist only once the app registry is ready
        from portal.core import sections
        from portal.core.templatetags.portal_display import add_label_source
        from workloads import (
            choices,
            signals,  # noqa: F401  (history → timeline)
        )
        from workloads import sections as workload_sections

        add_label_source(choices)

        org = sections.ORGANIZATION_PAGE
        sections.register(org, "workloads/workload_org_section.html", workload_sections.workloads_section, order=10)
        sections.register(org, "workloads/quota_org_section.html", workload_sections.quotas_section, order=20)
        sections.register(org, "workloads/htmx/cost_org_section.html", workload_sections.cost_section, order=25)
