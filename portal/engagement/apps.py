"""The engagement model around the organizations: escalations to specialist and service teams, program
cycles and outcomes. Its own app (label ``engagement``) so its migrations stay apart from the others'."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EngagementConfig(AppConfig):
    name = "portal.engagement"
    label = "engagement"
    verbose_name = _("Engagement")

    def ready(self) -> None:
        # deferred: the models and what imports them load once the app registry is ready
        from portal.core import notifications, sections
        from portal.engagement import sections as engagement
        from portal.engagement import services, slack, tasks  # noqa: F401 - registers the Celery task
        from workloads.interactions import hooks

        sections.register(sections.ORGANIZATION_PAGE, "engagement/htmx/org_outcomes_section.html",
                          engagement.organization_outcomes_section, order=70)
        sections.register(sections.ORGANIZATION_PAGE, "engagement/htmx/org_wind_down_section.html",
                          engagement.organization_wind_down_section, order=-10)
        sections.register(sections.LEAD_HOME, "engagement/htmx/lead_escalations.html",
                          engagement.lead_escalations_section, order=15)
        sections.register(sections.LEAD_HOME, "engagement/htmx/lead_failed_captures.html",
                          engagement.lead_failed_captures_section, order=16)
        if slack.thread_listener not in notifications.LISTENERS:
            notifications.LISTENERS.append(slack.thread_listener)
        notifications.SENDERS[slack.THREAD_CHANNEL] = slack.send_thread_reply
        hooks.RAISE_ESCALATION.provide(services.raise_escalation)
        hooks.ESCALATIONS_OF.provide(services.escalations_of)
        hooks.CUSTOMER_CHANNELS.provide(services.customer_channels)
