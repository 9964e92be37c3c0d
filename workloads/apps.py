"""What each organization is doing: workloads, quotas and capacity, support interactions, enablement."""
from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"

    def ready(self) -> None:
        # deferred: the models and what imports them load once the app registry is ready
        from portal import notifications, sections
        from portal.templatetags.portal_display import add_label_source
        from workloads import (
            choices,
            signals,  # noqa: F401  (history → timeline)
        )
        from workloads import sections as workload_sections
        from workloads.interactions import choices as interaction_choices
        from workloads.interactions import sections as interaction_sections
        from workloads.interactions import (
            support,  # noqa: F401  (registers the AWS Support Celery tasks)
            watchers,
        )

        notifications.SENDERS[watchers.CHANNEL] = watchers.send
        add_label_source(choices)
        add_label_source(interaction_choices)

        org = sections.ORGANIZATION_PAGE
        sections.register(org, "workloads/workload_org_section.html", workload_sections.workloads_section, order=10)
        sections.register(org, "workloads/quota_org_section.html", workload_sections.quotas_section, order=20)
        sections.register(org, "workloads/htmx/cost_org_section.html", workload_sections.cost_section, order=25)
        sections.register(org, "workloads/interactions/htmx/interaction_org_section.html",
                          interaction_sections.organization_section, order=30)
        sections.register(sections.LEAD_HOME, "workloads/interactions/htmx/interaction_lead_section.html",
                          interaction_sections.lead_home_section, order=10)
