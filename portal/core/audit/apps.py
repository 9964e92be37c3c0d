"""The audit trail is its own app (label ``audit``) in the core: every layer records into it, nothing in it reads
a layer above."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AuditConfig(AppConfig):
    name = "portal.core.audit"
    label = "audit"
    verbose_name = _("Audit trail")

    def ready(self) -> None:
        # deferred: the receivers import the models, which load once the app registry is ready
        from portal.core.audit import receivers  # noqa: F401 - connects the sign-in signals
        from portal.core.factors import receivers as factors  # noqa: F401 - records factors removed
