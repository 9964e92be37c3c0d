"""What each organization is doing: workloads, quotas and capacity, support interactions, enablement."""
from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"

    def ready(self):
        from workloads import sections_interactions

        sections_interactions.ready()
