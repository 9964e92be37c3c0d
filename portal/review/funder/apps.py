"""The program's report to its funder: quarterly and end-of-cycle reports, per organization and for the
program, issued frozen (figures and text stored, with a content hash). An app of its own (label ``funder``) in the
review layer, on top of everything: it reads the figures the weekly review and the cycle report compute."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FunderConfig(AppConfig):
    name = "portal.review.funder"
    label = "funder"
    verbose_name = _("Reports to the funder")

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from portal.core import notifications
        from portal.review.funder import sending

        notifications.SENDERS[sending.CHANNEL] = sending.deliver
