"""Cluster health and NCCL validation: ingestion, GPU faults, validation runs and readiness."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HealthConfig(AppConfig):
    name = "clusters.health"
    label = "health"
    verbose_name = _("Cluster health")

    def ready(self) -> None:
        # deferred: the models and what imports them load once the app registry is ready
        from clusters.health import choices, metrics, tasks
        from clusters.health.ingest import pushes
        from clusters.health.validation import service as validation
        from clusters.health.validation.readiness import readiness_section
        from portal.core import sections, signals
        from portal.core.metrics import collector
        from portal.core.templatetags.portal_display import add_label_source

        sections.register(sections.ORGANIZATION_PAGE, "health/readiness_org_section.html", readiness_section, order=50)
        add_label_source(choices)
        signals.cycle_archived.connect(validation.on_cycle_archived, dispatch_uid="health.close_archived")
        collector.register("health", metrics.families)
        pushes.KIND.provide(tasks.PUSH)
        validation.KIND.provide(tasks.VALIDATION)
        validation.CANCEL.provide(tasks.cancel_validation)
