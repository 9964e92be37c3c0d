from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = _("Program")

    def ready(self):
        from celery.signals import before_task_publish

        from portal import signals  # noqa: F401  (connects the sign-out receiver)
        from portal.metrics import broker

        # Every task message says when it was sent, so /metrics knows how old a queue's oldest message is.
        before_task_publish.connect(broker.stamp_message, dispatch_uid="portal.metrics.sent_at")
