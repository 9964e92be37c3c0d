"""The registry of route cases: how to reach every route of the portal with organization A's objects, and what
every role gets. Each area registers its own cases in ``tests/<area>/access_cases.py``; ``tests/access_cases.py``
loads them all, and the tests read the registry through it (importing this module alone gives an empty one).

The route walker (tests/portal/test_routes.py) fails for any URL pattern (named or not) that is not
registered, so a new view cannot ship without an access test; the access matrix
(tests/portal/test_access_matrix.py) sends every method a route serves as every role in ``ROLES`` and
asserts one exact status per (route, role, method). Each area adds:

- ``OBJECTS[key] = builder(world) -> object of organization A`` (its text fields carry MARKER_A),
- ``ROUTES[url_name] = Case(...)``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Every role the matrix plays. ``specialist`` answers escalations sent to the "frameworks" team and holds
# no organization role (tests/engagement/factories_engagement.specialist makes one).
ROLES = ("anonymous", "customer_a", "customer_b", "lead_a", "lead_b", "pm", "staff", "specialist")
# Roles outside organization A: by default they get ``Case.foreign``.
OUTSIDERS = ("customer_b", "lead_b", "specialist")
LOGIN = "login"  # an expectation: a redirect to the sign-in page


@dataclass(frozen=True)
class Case:
    """How to build the route's URL and what each role gets.

    ``kwargs(objs)`` builds the URL's kwargs from org A's objects (``objs['organization']`` ...).
    ``foreign``: what a role outside organization A gets (404 for A's objects; 200 with nothing of A's
    for lists; 403 for pages of a role it does not hold). ``expect[role]`` overrides the read status
    (default: 200 for customer_a, lead_a, pm, staff; ``foreign`` for OUTSIDERS; the sign-in redirect,
    or 403 for the API, for anonymous).

    Writes (every method but GET): ``payload(objs)`` is valid for organization A's objects (form data
    for pages, JSON for the API). ``writers`` succeed with it (``success``: the status, by method or
    one for all); every other role is refused with ``refused[role]`` (or ``refused["role:METHOD"]``),
    by default what it reads (403/404) or 403 where it reads the page but may not write; nothing is
    written when refused.
    """

    kwargs: Callable[[dict], dict] = field(default=lambda objs: {})
    foreign: int | str = 404
    api: bool = False
    # Pages: what anonymous gets. Login redirect unless public (then ``expect["anonymous"]``).
    public: bool = False
    expect: dict[str, int | str] = field(default_factory=dict)
    # Methods the route serves when they cannot be read from the view (function views without
    # require_http_methods).
    methods: tuple[str, ...] | None = None
    payload: Callable[[dict], dict] | None = None
    writers: frozenset[str] = frozenset()
    success: int | str | dict[str, int] | None = None
    refused: dict[str, int | str] = field(default_factory=dict)
    # A write by a writer that answers without writing a row (a lookup, a preview).
    writes_rows: bool = True
    # A page's PUT: Django parses form bodies of POST requests only, so a writer's PUT always comes back
    # as the form with its errors (this status); others are refused before the form is read.
    page_put: int = 200
    # Outsiders who rightly see organization A's rows here (a specialist sees what is escalated to their team).
    shown_to: frozenset[str] = frozenset()

    def read_status(self, role: str) -> int | str:
        if role in self.expect:
            return self.expect[role]
        if role == "anonymous" and self.public:
            return 200
        if role == "anonymous":
            return 403 if self.api else LOGIN
        if role in OUTSIDERS:
            return self.foreign
        return 200

    def write_status(self, role: str, method: str) -> int | str:
        for key in (f"{role}:{method}", role):
            if key in self.refused:
                return self.refused[key]
        if role in self.writers:
            if not self.api and method == "PUT":
                return self.page_put
            if isinstance(self.success, dict):
                return self.success[method]
            if self.success is not None:
                return self.success
            if not self.api:
                return 302
            return {"POST": 201, "DELETE": 204}.get(method, 200)
        if role == "anonymous" and not self.public:
            return 403 if self.api else LOGIN
        read = self.read_status(role)
        return read if read in (403, 404, 401) else 403

    def succeeds(self, role: str, method: str) -> bool:
        """Whether this write by this role is expected to go through (and so to write rows)."""
        return (role in self.writers and self.writes_rows and f"{role}:{method}" not in self.refused
                and role not in self.refused and (self.api or method != "PUT"))

    def expected(self, role: str, method: str) -> int | str:
        return self.read_status(role) if method == "GET" else self.write_status(role, method)


R = frozenset
LEADS_A = R({"lead_a", "staff"})
PMS = R({"pm", "staff"})


def _resolved_view(route: str, kwargs: dict):
    from django.urls import resolve, reverse

    func = resolve(reverse(route, kwargs=kwargs)).func
    return getattr(func, "view_class", None) or func.cls


def _values(changes: dict, objs: dict) -> dict:
    return {k: v(objs) if callable(v) else v for k, v in changes.items()}


def form_data(route: str, key: str | None = None, form=None, **changes) -> Callable[[dict], dict]:
    """A payload builder: the page's form bound to ``objs[key]`` (or empty) as the browser posts it back,
    with ``changes``. ``route`` names the page (an edit page of ``objs[key]`` takes its pk)."""

    def build(objs: dict) -> dict:
        obj = objs[key] if key else None
        view = _resolved_view(route, {"pk": obj.pk} if obj is not None and "edit" in route else {})
        import inspect

        form_class = form or view.form_class
        takes_user = "user" in inspect.signature(form_class.__init__).parameters
        bound = form_class(instance=obj, **({"user": objs.world.staff} if takes_user else {}))
        data = {}
        for name in bound.fields:
            value = bound[name].value()
            if value is None or value is False:
                continue
            if isinstance(value, list | tuple):
                data[name] = [getattr(v, "pk", v) for v in value]
            else:
                data[name] = getattr(value, "pk", value)
        data.update(_values(changes, objs))
        return data

    return build


def api_data(detail_route: str, key: str, **changes) -> Callable[[dict], dict]:
    """A payload builder: ``objs[key]`` as the API reads it at ``detail_route`` (read-only fields are
    ignored on input), with ``changes``."""

    def build(objs: dict) -> dict:
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory

        obj = objs[key]
        viewset = _resolved_view(detail_route, {"pk": obj.pk})
        request = Request(APIRequestFactory().get("/"))
        data = dict(viewset.serializer_class(obj, context={"request": request}).data)
        data.update(_values(changes, objs))
        return data

    return build


def _static(data: dict) -> Callable[[dict], dict]:
    return lambda objs: {k: v(objs) if callable(v) else v for k, v in data.items()}


LIST = 200
_SPECIALIST = frozenset({"specialist"})
FORBIDDEN = 403
# GET expectations of pages only some roles use. "Add" pages name no organization: any lead SA may
# open them (for their own organizations), so lead_b gets the form too.
LEAD_WRITES = {"customer_a": FORBIDDEN, "pm": FORBIDDEN}
LEAD_ADDS = {**LEAD_WRITES, "lead_b": LIST}
PM_WRITES = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}

OBJECTS: dict[str, Callable] = {
    "organization": lambda w: w.org_a,
}

ROUTES: dict[str, Case] = {}


def _memo(w, key, build):
    """One object per world, shared by the builders of several areas (the world lives for one test)."""
    cache = w.__dict__.setdefault("_health_objects", {})
    if key not in cache:
        cache[key] = build(w)
    return cache[key]


# --- writes: a payload valid for organization A's objects, and who may send it ----------------------------
def _writes(name: str, payload: Callable[[dict], dict], writers, **more) -> None:
    from dataclasses import replace

    ROUTES[name] = replace(ROUTES[name], payload=payload, writers=frozenset(writers), **more)


def _pk(key: str) -> Callable[[dict], int]:
    return lambda objs: objs[key].pk


STAFF = {"staff"}
LEAD = {"lead_a", "staff"}
PM = {"pm", "staff"}
# Creating through the API: an organization the caller cannot see is not among the field's choices (400).
_UNSEEN_ORG = {"customer_b": 400, "lead_b": 400, "specialist": 400}
