"""What each organization is doing: workloads, quotas and capacity, support interactions, enablement."""
from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"

    def ready(self) -> None:
        from portal import views as portal_views
        from workloads import signals  # noqa: F401  (history → timeline)
        from workloads.sections import SECTIONS

        for section in SECTIONS:
            if section not in portal_views.ORGANIZATION_SECTIONS:
                portal_views.ORGANIZATION_SECTIONS.append(section)
