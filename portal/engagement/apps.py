"""The engagement model around the organizations: escalations to specialist and service teams, program
cycles and outcomes. Its own app (label ``engagement``) so its migrations stay apart from the others'."""
from django.apps import AppConfig


class EngagementConfig(AppConfig):
    name = "portal.engagement"
    label = "engagement"
    verbose_name = "Engagement"

    def ready(self) -> None:
        from portal import views as portal_views
        from portal.engagement.sections import LEAD_SECTIONS, ORGANIZATION_SECTIONS

        for section in ORGANIZATION_SECTIONS:
            if section not in portal_views.ORGANIZATION_SECTIONS:
                portal_views.ORGANIZATION_SECTIONS.append(section)
        from portal import notifications
        from portal.engagement import slack, tasks  # noqa: F401 - registers the Celery task

        if slack.thread_listener not in notifications.LISTENERS:
            notifications.LISTENERS.append(slack.thread_listener)
        for section in LEAD_SECTIONS:
            if section not in portal_views.LEAD_HOME_SECTIONS:
                portal_views.LEAD_HOME_SECTIONS.append(section)
