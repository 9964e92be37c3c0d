"""What enablement sessions write on an organization's timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import define
from workloads.enablement.choices import EnablementKind


def kind_label(value) -> str:
    """'workshop', 'office_hours': a session's kind as the reader's language names it."""
    try:
        return str(EnablementKind(value).label)
    except ValueError:
        return str(value)


SESSION = define("enablement.session", gettext_noop("%(kind)s: %(topic)s"), {"kind": kind_label})
