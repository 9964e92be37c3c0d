"""The weekly review: the program overview, frozen weekly reviews, the customer's status section and the
lead SA's home sections. A separate app so its migrations stay apart from the portal app's."""
from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "portal.review"
    label = "review"
    verbose_name = "Weekly review"

    def ready(self) -> None:
        from portal import views as portal_views
        from portal.review.sections import LEAD_SECTIONS, ORGANIZATION_SECTIONS

        # The status ("At a glance": health problems first) opens the organization page.
        for section in reversed(ORGANIZATION_SECTIONS):
            if section not in portal_views.ORGANIZATION_SECTIONS:
                portal_views.ORGANIZATION_SECTIONS.insert(0, section)
        for section in LEAD_SECTIONS:
            if section not in portal_views.LEAD_HOME_SECTIONS:
                portal_views.LEAD_HOME_SECTIONS.append(section)
