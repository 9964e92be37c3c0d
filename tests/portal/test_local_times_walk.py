"""Times on pages are in the display time zone and the locale's format: no page shows an ISO timestamp
("2026-12-07T02:51", UTC) in its text. ``datetime=`` and data attributes keep ISO (machines read them)."""
from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.urls import reverse

from tests.access_cases import ROUTES
from tests.portal.test_routes import all_routes, module_world, signed_in_sessions

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
CALLBACKS = {route_id: route.callback for route_id, route in all_routes().items()}
PAGES = sorted(name for name in ROUTES if name in CALLBACKS and not name.startswith(("api", "schema"))
               and "api" not in name.split(":")[0])


def visible(html: str) -> str:
    """The page's text as a reader sees it: tags (and their attributes) and scripts removed."""
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"<[^>]*>", " ", html)


@pytest.fixture(scope="module")
def walk(django_db_setup, django_db_blocker):
    with module_world(django_db_blocker) as built:
        built.sessions = signed_in_sessions(built.users)
        yield built


@pytest.mark.parametrize("name", PAGES)
def test_no_page_shows_an_iso_timestamp(name, walk, db, client):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(walk.objs))
    found = {}
    for role in ("staff", "lead_a"):
        client.cookies[settings.SESSION_COOKIE_NAME] = walk.sessions[role]
        response = client.get(url, HTTP_ACCEPT_LANGUAGE="ja", HTTP_HX_REQUEST="true" if "htmx" in name else "")
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        text = visible(response.content.decode())
        hits = ISO_TIME.findall(text)
        if hits:
            found[role] = [text[max(0, text.find(h) - 80): text.find(h) + 40] for h in hits[:3]]
    assert not found, found
