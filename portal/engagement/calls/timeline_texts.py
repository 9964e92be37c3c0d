"""What calls for applications write on an organization's timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import define, number

STARTED = define("call.application_started", gettext_noop("Application to %(call)s started"))
SUBMITTED = define("call.application_submitted",
                   gettext_noop("Application to %(call)s submitted (version %(number)s)"))
AWARDED = define("call.awarded", gettext_noop("%(call)s: awarded %(hours)s accelerator-hours for the next cycle"),
                 {"hours": number})
NOT_AWARDED = define("call.not_awarded",
                     gettext_noop("%(call)s: not awarded this time; the reviewers' summary is on the application"))
