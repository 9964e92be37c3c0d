"""A node's health reasons as codes with parameters (``portal.core.stored_text``): the report's node rows keep them
so each reader reads "GPU 3: XID 79: GPU has fallen off the bus (reboot …)" in their language, numbers written as
their language writes them. The fault's meaning and advice are stored English words (``fault_words``, ``xid_words``,
and the valued ones ``stored_words`` recognises), shown through ``stored_words``."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import Message, define, message
from portal.core.templatetags.portal_display import stored_words

GPU = define("health.where_gpu", gettext_noop("GPU %(gpu)s"))
EFA = define("health.where_efa", gettext_noop("EFA %(device)s"))
NODE = define("health.where_node", gettext_noop("node"))
REASON = define("health.reason", gettext_noop("%(where)s: %(meaning)s (%(action)s)"),
                {"meaning": stored_words, "action": stored_words})
NO_DCGM = define("health.no_dcgm_series", gettext_noop("no DCGM series for this node: is dcgm-exporter running?"))
# The English ``stored_words`` turns into the reader's language (written by ``summary``, stored on faults).
EFA_SEEN = gettext_noop("%(seen)s of %(expected)s EFA devices reported")
GREW = gettext_noop("%(counter)s grew by %(grown)s since the last report")


def where(gpu, device) -> Message:
    if gpu is not None and gpu != "":
        return message(GPU, gpu=gpu)
    return message(EFA, device=device) if device else message(NODE)


def reason(fault) -> Message:
    """One fault as a node's reason: where, what, and what to do."""
    return message(REASON, where=where(fault.gpu, fault.device), meaning=fault.meaning, action=fault.action)


def shown(value) -> str:
    """A stored reason in the reader's language: a coded one rendered, an older row's English as it was stored."""
    return stored_words(value) if isinstance(value, dict) else str(value or "")
