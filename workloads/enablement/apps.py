"""Enablement is an app of its own (label ``enablement``): its sessions are program-wide, invited organizations
attend them, and nothing of the workload records depends on them."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EnablementConfig(AppConfig):
    name = "workloads.enablement"
    label = "enablement"
    verbose_name = _("Enablement")

    def ready(self) -> None:
        # deferred: the template library is loaded once the app registry is ready
        from portal.core.templatetags.portal_display import add_label_source
        from workloads.enablement import choices

        add_label_source(choices)
