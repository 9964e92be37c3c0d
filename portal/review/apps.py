"""The weekly review: the program overview, frozen weekly reviews, the customer's status section and the
lead SA's home sections. A separate app so its migrations stay apart from the portal app's."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    name = "portal.review"
    label = "review"
    verbose_name = _("Weekly review")

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from portal.core import sections
        from portal.review import sections as review
        from portal.review import tallies

        tallies.connect()

        # The status ("At a glance": health problems first) opens the organization page.
        sections.register(sections.ORGANIZATION_PAGE, "review/org_status_section.html", review.status_section, order=0)
        sections.register(sections.LEAD_HOME, "review/htmx/lead_open.html", review.lead_open_section, order=20)
        sections.register(sections.LEAD_HOME, "review/htmx/lead_launches.html", review.lead_launches_section, order=30)
        sections.register(sections.LEAD_HOME, "review/htmx/lead_faults.html", review.lead_faults_section, order=40)
