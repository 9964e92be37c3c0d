"""Text the portal sends to Slack, escaped so users' words stay words.

Slack reads ``<…>`` in message text as markup: ``<!channel>`` pings a whole channel, ``<@U…>`` a person,
``<https://evil.example|Your session expired>`` is a link whose text hides where it goes. Titles, bodies, names
and reasons that users typed reach Slack in notifications, thread replies, ephemeral answers and the slash
command's answer, so every one of them goes through :func:`escape` (Slack's own rule: ``&``, ``<`` and ``>`` as
entities, nothing else), and the portal's own markup (its links) is added around the escaped text. Block Kit
text is also ``verbatim``, so Slack does not turn bare names or URLs in it into mentions or links either.
"""
from __future__ import annotations


def escape(text) -> str:
    """``text`` as Slack message text that prints it literally (None prints as nothing)."""
    if text is None:
        return ""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label) -> str:
    """The portal's own link ``url`` (a page of the portal) with an escaped ``label``."""
    return f"<{escape(url).replace('|', '%7C')}|{escape(label)}>"


def mrkdwn(text: str) -> dict:
    """A Block Kit text object of already escaped ``text``, never auto-linked or auto-mentioned."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}
