from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal.core"
    label = "portal"  # the tables, migrations and permissions keep the name they were made with
    verbose_name = _("Program")

    def ready(self):
        from celery.signals import before_task_publish

        from portal.core import signals  # noqa: F401  (connects the sign-out receiver)
        from portal.core.metrics import broker

        # Every task message says when it was sent, so /metrics knows how old a queue's oldest message is.
        before_task_publish.connect(broker.stamp_message, dispatch_uid="portal.core.metrics.sent_at")
