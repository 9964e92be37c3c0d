"""Support interactions are an app of their own (label ``interactions``): their pages, API, AWS Support sync and
watcher notifications read workloads and organizations but belong to neither."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InteractionsConfig(AppConfig):
    name = "workloads.interactions"
    label = "interactions"
    verbose_name = _("Interactions")

    def ready(self) -> None:
        # deferred: these modules import models, which exist only once the app registry is ready
        from portal.core import notifications, sections
        from portal.core.templatetags.portal_display import add_label_source
        from workloads.interactions import choices as interaction_choices
        from workloads.interactions import services, watchers
        from workloads.interactions.desk import sections as interaction_sections
        from workloads.interactions.desk import tasks

        notifications.SENDERS[watchers.CHANNEL] = watchers.send
        services.OPEN_REQUESTED_CASE.provide(tasks.open_requested_case)
        add_label_source(interaction_choices)

        sections.register(sections.ORGANIZATION_PAGE, "workloads/interactions/htmx/interaction_org_section.html",
                          interaction_sections.organization_section, order=30)
        sections.register(sections.LEAD_HOME, "workloads/interactions/htmx/interaction_lead_section.html",
                          interaction_sections.lead_home_section, order=10)
