"""Cluster health and NCCL validation: ingestion, GPU faults, validation runs and readiness."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HealthConfig(AppConfig):
    name = "clusters.health"
    label = "health"
    verbose_name = _("Cluster health")

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from clusters.health.readiness import readiness_section
        from portal import sections

        sections.register(sections.ORGANIZATION_PAGE, "health/readiness_org_section.html", readiness_section, order=50)
