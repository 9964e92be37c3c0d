"""Fixtures shared by every test: two organizations, a user for every role, the embedded AWS
endpoint (one moto server per test session, reset between tests) and a real Celery worker."""
from __future__ import annotations

import copy
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_SESSION_TOKEN", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "ap-northeast-1")

from django.utils import translation  # noqa: E402

from tests.factories import MembershipFactory, OrganizationFactory, UserFactory  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# Every object of organization A carries this marker in a text field, so a test can assert that a
# page or export shown to someone else never contains it.
MARKER_A = "ZZ-ORG-A-SECRET"


@dataclass
class World:
    org_a: object
    org_b: object
    customer_a: object
    customer_b: object
    lead_a: object
    lead_b: object
    pm: object
    staff: object

    def users(self) -> dict:
        return {
            "customer_a": self.customer_a,
            "customer_b": self.customer_b,
            "lead_a": self.lead_a,
            "lead_b": self.lead_b,
            "pm": self.pm,
            "staff": self.staff,
        }


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts and ends in the program's default language. Django activates a request's language in the
    thread and never deactivates it, so a request by someone who reads Japanese would leave the tests that follow
    in the same process writing Japanese (timeline entries, messages) where they expect English."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def world(_module_world, db) -> World:
    """Organization A and B; a customer and a lead SA of each; a program manager; a staff user.

    In a module whose tests never commit (see ``_module_world``) the rows are built once for the module and
    each test gets its own copy of the objects (a deep copy, as Django's ``setUpTestData`` gives); its writes
    roll back with its savepoint. Elsewhere the world is built for each test."""
    if _module_world is not None:
        return copy.deepcopy(_module_world)
    return build_world()


# Fixtures that make a test commit (its rows must reach another connection, or its on_commit hooks run): a
# module with any of them builds the world per test, since a world shared by the module lives in a
# transaction that stays open across its tests.
COMMITTING_FIXTURES = frozenset({"transactional_db", "live_server", "django_db_reset_sequences",
                                 "django_db_serialized_rollback"})


def _commits(item) -> bool:
    marker = item.get_closest_marker("django_db")
    if marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
                               or marker.kwargs.get("serialized_rollback") or (marker.args and marker.args[0])):
        return True
    return bool(COMMITTING_FIXTURES & set(getattr(item, "fixturenames", ())))


@pytest.fixture(scope="module")
def _module_world(request, django_db_setup, django_db_blocker):
    """The module's shared world (None where it is built per test): the rows are made once, inside a
    transaction that every test of the module runs inside (each in its own savepoint, rolled back by
    pytest-django) and that is rolled back when the module ends; NetBox's ``setUpTestData`` idea. A module opts
    out with ``pytestmark = pytest.mark.world_per_test``."""
    if request.node.nodeid not in request.config.stash.get(_SHARED_WORLD_MODULES, set()):
        yield None
        return
    from django.db import transaction

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            world = build_world()
        except BaseException:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            raise
    try:
        yield world
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


_SHARED_WORLD_MODULES = pytest.StashKey[set]()


def _shared_world_modules(items) -> set[str]:
    """The modules whose world is built once: some test uses ``world`` and none commits or opts out."""
    by_module: dict[str, list] = {}
    for item in items:
        module = item.getparent(pytest.Module)
        if module is not None:
            by_module.setdefault(module.nodeid, []).append(item)
    return {nodeid for nodeid, tests in by_module.items()
            if any("world" in getattr(t, "fixturenames", ()) for t in tests)
            and not any(_commits(t) or t.get_closest_marker("world_per_test") for t in tests)}


def build_world() -> World:
    """The ``world`` fixture's rows, for fixtures of a wider scope (inside their own transaction)."""
    org_a = OrganizationFactory(name=f"Alpha Labs {MARKER_A}", slug="alpha-labs", description=MARKER_A)
    org_b = OrganizationFactory(name="Beta Works", slug="beta-works")
    customer_a = MembershipFactory(user=UserFactory(username="customer_a"), organization=org_a, role="customer").user
    customer_b = MembershipFactory(user=UserFactory(username="customer_b"), organization=org_b, role="customer").user
    lead_a = MembershipFactory(user=UserFactory(username="lead_a"), organization=org_a, role="lead_sa").user
    lead_b = MembershipFactory(user=UserFactory(username="lead_b"), organization=org_b, role="lead_sa").user
    pm = UserFactory(username="pm", is_program_manager=True)
    staff = UserFactory(username="staff", is_staff=True)
    return World(org_a, org_b, customer_a, customer_b, lead_a, lead_b, pm, staff)


# The longest tests: the browser walks (Chromium, seconds per page), the API fuzzer (schemathesis against a live
# server, as every role: minutes of CPU) and the migration copy (seeds and migrates demo databases in
# subprocesses), the tests that start a real Celery worker (seconds each), and any test marked `slow`.
HEAVY_DIRS = ("tests/e2e/", "tests/fuzz/", "tests/data_safety/")


def _heavy(item) -> bool:
    path = Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
    return path.startswith(HEAVY_DIRS) or "celery_worker_process" in getattr(item, "fixturenames", ()) or any(
        item.get_closest_marker(name) for name in ("browser", "slow", "worker"))


def _uses_db(item) -> bool:
    return item.get_closest_marker("django_db") is not None or "db" in getattr(item, "fixturenames", ())


def _heaviest_modules_first(items) -> None:
    """Reorder ``items`` so that each test process ends its run on short tests, never idle behind a long one.

    Three parts, in this order: the tests that touch no database, those that run in a transaction rolled back,
    then those that commit. Those that commit flush every table when they end, the rows the migrations wrote
    included, so in each process they come after every test that may read those rows (Django's and
    pytest-django's rule, kept: pytest-xdist's default scheduling hands each process its tests in this order).
    Within each part the modules with a heavy test come first; a module's tests of one part stay together, in
    their order (the module's shared fixtures are built once per process that runs it)."""
    groups: dict = {}
    for index, item in enumerate(items):
        part = 2 if _commits(item) else 1 if _uses_db(item) else 0  # a committing test may not ask for `db`
        key = (part, item.getparent(pytest.Module) or item)
        heavy, first, tests = groups.get(key, (False, index, []))
        tests.append(item)
        groups[key] = (heavy or _heavy(item), first, tests)
    order = sorted(groups.items(), key=lambda kv: (kv[0][0], not kv[1][0], kv[1][1]))
    items[:] = [item for _, (_, _, tests) in order for item in tests]


# Tests that cannot share the machine with other test processes (`@pytest.mark.serial`: one that restarts a
# shared service, measures the machine or binds a fixed port): `make test` runs every other test in parallel
# (pytest-xdist, `--group parallel`), then these alone (`--group serial`); a plain `pytest` runs both.


def pytest_ignore_collect(collection_path, config):
    """``--group serial`` imports only the test files that mark a test serial (the marker's text is in the file:
    ``@pytest.mark.serial`` or ``pytestmark = pytest.mark.serial``), instead of every module of the suite."""
    if config.getoption("--group") != "serial" or not collection_path.is_file():
        return None
    if collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return "mark.serial" not in collection_path.read_text(encoding="utf-8") or None
    return None


def pytest_addoption(parser):
    parser.addoption("--group", choices=("all", "parallel", "serial"), default="all",
                     help="run only the tests that may run in parallel, only those marked serial, or all (default)")
    parser.addoption("--world-per-test", action="store_true",
                     help="build the world fixture for every test, never once per module (to compare, or to rule it out)")


def pytest_collection_modifyitems(config, items):
    shared = config.stash[_SHARED_WORLD_MODULES] = (
        set() if config.getoption("--world-per-test") else _shared_world_modules(items))
    for item in items:
        # Every database test of such a module sees the module's world, whether or not it asks for it and
        # whichever tests ran before it in this process (xdist hands a module's tests to several).
        module = item.getparent(pytest.Module)
        if module is not None and module.nodeid in shared and "_module_world" not in item.fixturenames \
                and ("db" in item.fixturenames or item.get_closest_marker("django_db") is not None):
            item.fixturenames.insert(0, "_module_world")
    _heaviest_modules_first(items)
    for item in items:
        # `--group serial` finds the serial tests by the marker's text in their file (pytest_ignore_collect): a
        # test marked another way would run in neither part.
        if item.get_closest_marker("serial") and "mark.serial" not in Path(str(item.path)).read_text(encoding="utf-8"):
            raise pytest.UsageError(f"{item.nodeid} is marked serial outside its file; write the marker in the file")
    group = config.getoption("--group")
    if group == "all":
        return
    keep, drop = [], []
    for item in items:
        (keep if (item.get_closest_marker("serial") is not None) == (group == "serial") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_use_migrations, django_db_keepdb,
                    django_db_createdb, django_db_modify_db_settings):
    """pytest-django's fixture of this name, except that a pytest-xdist process copies a template database the
    run migrated once instead of migrating its own (tests/databases.py). ``--reuse-db`` and ``--nomigrations``
    take pytest-django's way."""
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django import fixtures as pytest_django_fixtures

    from tests.databases import setup_from_template, teardown_copy

    verbosity = request.config.option.verbose
    workerinput = getattr(request.config, "workerinput", None)
    aliases, serialized_aliases = pytest_django_fixtures._get_databases_for_setup(request.session.items)
    keepdb = django_db_keepdb and not django_db_createdb
    if workerinput and django_db_use_migrations and not keepdb and set(aliases) <= {"default"}:
        with django_db_blocker.unblock():
            copy = setup_from_template(worker=workerinput["workerid"], run=workerinput["testrunuid"],
                                       verbosity=verbosity, serialized="default" in serialized_aliases)
        yield
        with django_db_blocker.unblock():
            teardown_copy(*copy)
        return
    if not django_db_use_migrations:
        pytest_django_fixtures._disable_migrations()
    with django_db_blocker.unblock():
        config = setup_databases(verbosity=verbosity, interactive=False, aliases=aliases,
                                 serialized_aliases=serialized_aliases, keepdb=keepdb)
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            teardown_databases(config, verbosity=verbosity)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def aws_server():
    """One embedded AWS endpoint (moto's server, with the portal's extra resource types) per session."""
    try:
        from sandbox.aws.embedded import start_server
    except ImportError:
        start_server = None
    if start_server is not None:
        server, url = start_server()
    else:
        from moto.server import ThreadedMotoServer

        port = _free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        url = f"http://127.0.0.1:{port}"
    yield url
    server.stop()


@pytest.fixture
def aws(aws_server, settings):
    """The embedded endpoint, empty, with the portal's client factory pointed at it."""
    import requests

    from portal.core import aws as portal_aws

    requests.post(f"{aws_server}/moto-api/reset", timeout=60)  # a bound, not a check: slow on a loaded machine
    settings.AWS_ENDPOINT_URL = aws_server
    portal_aws.clear_credentials()
    model_validation = _model_validation()
    if model_validation is not None:
        model_validation.forget()
    yield aws_server
    portal_aws.clear_credentials()
    if model_validation is not None:
        # An answer the emulation gave against botocore's model fails the test that received it, even when the
        # portal took the InternalFailure in its stride.
        assert model_validation.violations() == [], model_validation.violations()


def _model_validation():
    try:
        from sandbox.aws import model_validation
    except ImportError:  # the production image has no embedded endpoint
        return None
    return model_validation


def redis_url() -> str | None:
    from django.conf import settings

    url = settings.REDIS_URL
    return url or None


@pytest.fixture
def celery_worker_process(transactional_db, aws, settings):
    """A real `celery worker` process consuming the test broker (Redis) and the test database."""
    import redis as redis_lib

    from tests.workers import start_worker, stop_worker, worker_env

    url = redis_url()
    if not url:
        pytest.skip("Redis is not reachable")
    redis_lib.Redis.from_url(url).flushdb()
    proc = start_worker("test", env=worker_env(aws), log=Path(settings.TEST_VAR_DIR) / "celery-worker.log")
    yield proc
    stop_worker(proc)


@pytest.fixture
def outbound_allows_local(settings, monkeypatch):
    """Let the guarded outbound client (portal/core/outbound.py) call 127.0.0.1 over http, for a listener a
    test starts there. The defaults refuse it; the environment carries it to a worker started later."""
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.OUTBOUND_HTTP_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("OUTBOUND_ALLOWED_HOSTS", "127.0.0.1")
    monkeypatch.setenv("OUTBOUND_HTTP_HOSTS", "127.0.0.1")
