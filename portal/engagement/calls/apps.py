"""Calls for the next program cycle: applications, their review and the award. An app of its own (label
``calls``) inside the engagement layer, so its migrations and tables stay apart from the engagement model's."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CallsConfig(AppConfig):
    name = "portal.engagement.calls"
    label = "calls"
    verbose_name = _("Calls and awards")

    def ready(self) -> None:
        # deferred: the sections' builders read the models, which load once the app registry is ready
        from portal.core import reviewers, sections
        from portal.engagement.calls import sections as calls
        from portal.engagement.calls.models import ReviewAssignment

        sections.register(sections.ORGANIZATION_PAGE, "calls/htmx/org_applications_section.html",
                          calls.organization_applications_section, order=75)
        reviewers.ASSIGNMENTS.provide(ReviewAssignment.held)
