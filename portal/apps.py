from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Program"

    def ready(self):
        from portal import signals  # noqa: F401  (connects the sign-out receiver)
