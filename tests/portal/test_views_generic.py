"""Views are safe by construction: a page's rows and its object come through the base views of
``portal.core.generic`` (which restrict them by the one policy), so a hand-written ``restrict(`` in a view
module is the exception. Each one left says why on its line or the line above (``# restrict: …``), and the
count per module is pinned here: a new one fails until it is moved onto a base or allowed with its reason."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("portal", "workloads", "clusters")
CALL = re.compile(r"\.restrict\(")
REASON = "# restrict:"

# Module → hand-written calls allowed, each with its comment in the module.
COMMENTED = {
    "portal/core/views.py": 1,  # home: the customer's one organization, to send them to its page
    "portal/review/views.py": 4,  # function views of the weekly review: rows beside a page, an item's 404
    "clusters/views.py": 1,  # a section builder of the organization page, not a view of its own
    "portal/engagement/calls/api/views.py": 1,  # an application's versions beside it, in a viewset's action
    "workloads/interactions/desk/api/views.py": 1,  # an interaction's comments beside it, in a viewset's action
    "clusters/health/api/validation.py": 1,  # a cluster's runs beside it, for the bandwidth trend (an APIView)
}
# Modules not yet moved onto the bases, and API viewsets (whose base is ``portal.core.api.base``), whose calls
# are not commented in place: their counts may only go down.
PINNED = {
    "portal/core/sso/admin_views.py": 3,
    "portal/core/sso/provider_views.py": 1,
}


def _view_modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel:
                continue
            if path.name == "views.py" or path.name.endswith("_views.py") or "/views/" in rel or _api_views(rel):
                yield rel, path.read_text().splitlines()


def _api_views(rel: str) -> bool:
    """An API module beside ``api/views.py`` holding views of its own (health's validation, agent and alert
    routes); not a serializer module (a related field's choices) nor the API's base itself."""
    return "/api/" in rel and not rel.startswith("portal/core/api/") and rel.rsplit("/", 1)[1] not in (
        "serializers.py", "urls.py", "__init__.py")


def _calls(lines):
    return [i for i, line in enumerate(lines) if CALL.search(line) and not line.lstrip().startswith("def ")]


def test_hand_written_restrict_is_pinned_per_view_module():
    found = {rel: len(_calls(lines)) for rel, lines in _view_modules()}
    found = {rel: n for rel, n in found.items() if n}
    allowed = {**COMMENTED, **PINNED}
    more = {rel: (n, allowed.get(rel, 0)) for rel, n in found.items() if n > allowed.get(rel, 0)}
    assert more == {}, "move these onto portal.core.generic's bases (or allow them here with the reason)"
    fewer = {rel: (found.get(rel, 0), n) for rel, n in allowed.items() if found.get(rel, 0) < n}
    assert fewer == {}, "fewer hand-written restricts than allowed: lower the count here"


def test_each_allowed_restrict_says_why():
    uncommented = []
    for rel, lines in _view_modules():
        if rel in PINNED:
            continue
        for i in _calls(lines):
            if REASON not in lines[i] and (i == 0 or REASON not in lines[i - 1]):
                uncommented.append(f"{rel}:{i + 1}")
    assert uncommented == []


def test_the_bases_are_what_views_use():
    """The object bases look up through the policy: another organization's object is a 404 before any method."""
    from portal.core import generic

    for name in ("ObjectListView", "ObjectView", "ObjectEditView", "ObjectDeleteView", "ObjectPageView",
                 "ObjectActionView"):
        assert issubclass(getattr(generic, name), generic.RestrictedQuerysetMixin), name
