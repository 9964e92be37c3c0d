"""Node remediation acts on a cluster through the organization's role: an app of its own (label ``remediation``)
because it has its own models, pages, API and worker, and reaches health and clusters through their models."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RemediationConfig(AppConfig):
    name = "clusters.remediation"
    label = "remediation"
    verbose_name = _("Node remediation")

    def ready(self) -> None:
        # deferred: the tasks module imports the models
        from clusters.remediation import tasks
        from portal import notifications

        if tasks.on_event not in notifications.LISTENERS:
            notifications.LISTENERS.append(tasks.on_event)
