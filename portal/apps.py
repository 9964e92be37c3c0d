from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = _("Program")

    def ready(self):
        from portal import signals  # noqa: F401  (connects the sign-out receiver)
