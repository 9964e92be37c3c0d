"""What a change of remediation consent writes on the organization's timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language. People are named, fields and modes by their codes."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import define, lines

NARROWED = define("consent.narrowed", gettext_noop("Remediation consent narrowed by %(who)s"))
PROPOSED = define("consent.proposed", gettext_noop(
    "Remediation consent change proposed by %(who)s: waits for a customer engineer's approval"))
CHANGED = define("consent.changed", gettext_noop(
    "Remediation consent changed: proposed by %(proposer)s, approved by %(who)s"))
DECLINED = define("consent.declined", gettext_noop(
    "Remediation consent change proposed by %(proposer)s declined by %(who)s"))
WIDENS = define("consent.widens", gettext_noop("Widens: %(items)s."))
CHANGES = define("consent.changes", "%(items)s", {"items": lines})
FIELD_CHANGED = define("consent.field_changed", "%(field)s: %(before)s → %(after)s")
WIDER_MODE = define("consent.wider_mode", gettext_noop("consent %(before)s → %(after)s"))
WIDER_KINDS = define("consent.wider_kinds", gettext_noop("remediated automatically: %(kinds)s"))
WIDER_NODES = define("consent.wider_nodes", gettext_noop("nodes of a cluster at once %(before)s → %(after)s"))
WIDER_COOLDOWN = define("consent.wider_cooldown", gettext_noop("cool-down %(before)s h → %(after)s h"))
