"""What ingestion writes on the organization's timeline, as codes with parameters (``portal.core.stored_text``),
read in each reader's language: critical faults first seen in a report, and uploaded validation runs."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from clusters.health.readers import reason_texts
from portal.core.stored_text import Message, define, lines, message, number
from portal.core.templatetags.portal_display import stored_words

WHOLE_CLUSTER = define("health.whole_cluster", gettext_noop("cluster"))
FOUND = define("health.critical_found", gettext_noop("%(cluster)s: %(host)s %(meaning)s"), {"meaning": stored_words})
FOUND_MORE = define("health.critical_found_more", gettext_noop("%(cluster)s: %(host)s %(meaning)s and %(more)s more"),
                    {"meaning": stored_words, "more": number})
FAULT_LINE = define("health.fault_line", gettext_noop("%(host)s %(where)s: %(meaning)s — %(action)s"),
                    {"meaning": stored_words, "action": stored_words})
FAULT_LINES = define("health.fault_lines", "%(faults)s", {"faults": lines})

RUN_ENDED = {
    "pass": define("validation.run_passed", gettext_noop("%(cluster)s: %(tool)s %(collective)s validation passed")),
    "warn": define("validation.run_passed_with_warnings",
                   gettext_noop("%(cluster)s: %(tool)s %(collective)s validation passed with warnings")),
    "fail": define("validation.run_failed", gettext_noop("%(cluster)s: %(tool)s %(collective)s validation failed")),
    "none": define("validation.run_not_judged",
                   gettext_noop("%(cluster)s: %(tool)s %(collective)s validation stored, not judged")),
}


def host(fault) -> Message | str:
    return fault.hostname or message(WHOLE_CLUSTER)


def found(cluster, faults: list) -> tuple[Message, Message]:
    """The title and body of the entry for critical faults first seen in one report."""
    first = faults[0]
    if len(faults) > 1:
        title = message(FOUND_MORE, cluster=cluster.name, host=host(first), meaning=first.meaning, more=len(faults) - 1)
    else:
        title = message(FOUND, cluster=cluster.name, host=host(first), meaning=first.meaning)
    body = message(FAULT_LINES, faults=[
        message(FAULT_LINE, host=host(f), where=reason_texts.where(f.gpu or None, f.device), meaning=f.meaning,
                action=f.action) for f in faults[:50]])
    return title, body
