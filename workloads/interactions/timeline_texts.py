"""What interactions and their escalations write on the organization's timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language."""
from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext_noop

from portal.core.choices import InteractionStatus, Severity, Visibility
from portal.core.stored_text import define
from workloads.interactions.choices import InteractionKind


def kind_label(value) -> str:
    """'meeting', 'support_case': an interaction's kind as the reader's language names it."""
    try:
        return str(InteractionKind(value).label)
    except ValueError:
        return str(value)


def status_label(value) -> str:
    """'open', 'waiting_aws': an interaction's status as the reader's language names it."""
    try:
        return str(InteractionStatus(value).label)
    except ValueError:
        return str(value)


LOGGED = define("interaction.logged", gettext_noop("%(kind)s: %(summary)s"), {"kind": kind_label})
STATUS_CHANGED = define("interaction.status_changed", gettext_noop("%(summary)s: %(before)s → %(after)s"),
                        {"before": status_label, "after": status_label})


def visibility_label(value) -> str:
    try:
        return str(Visibility(value).label)
    except ValueError:
        return str(value)


# An interaction's own history (``InteractionComment.body_code``).
VISIBILITY_CHANGED = define("interaction.visibility_changed", gettext_noop("Visibility changed to %(visibility)s."),
                            {"visibility": visibility_label})
CASE_OPENED = define("interaction.case_opened", gettext_noop("Opened AWS Support case %(case)s: %(subject)s"))


def english_label(label) -> str:
    """A choice's label in English: what the history's old and new values keep (shown in the reader's language)."""
    with translation.override("en"):
        return str(label)


def severity_label(value) -> str:
    try:
        return str(Severity(value).label)
    except ValueError:
        return str(value)


# Watchers' e-mail lines (``watchers.tell``), written in each watcher's language.
COMMENTED = define("interaction.commented", gettext_noop("%(who)s commented: %(body)s"))
SOMEONE_COMMENTED = define("interaction.someone_commented", gettext_noop("Someone commented: %(body)s"))
SEVERITY_CHANGED = define("interaction.severity_changed", gettext_noop("Severity: %(before)s → %(after)s"),
                          {"before": severity_label, "after": severity_label})
