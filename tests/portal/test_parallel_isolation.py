"""What each pytest-xdist process owns (portal/settings/test.py): its Redis database and its files under var/;
and the world a module shares (tests/conftest.py): every database test of the module sees it, none sees
another test's changes to it."""
import os
from pathlib import Path

import pytest
from django.conf import settings

from portal.core.models import Organization
from portal.settings.test import move_redis_env, worker_redis_url
from tests.conftest import MARKER_A, ROOT, _heaviest_modules_first


@pytest.mark.django_db
def test_a_database_test_of_the_module_sees_its_world_without_asking_for_it(request):
    # First in the file: in a serial run nothing has built the module's world yet unless this test does.
    if request.config.getoption("--world-per-test"):
        pytest.skip("the world is built for each test that asks for it (--world-per-test)")
    assert sorted(Organization.objects.values_list("slug", flat=True)) == ["alpha-labs", "beta-works"]


def test_a_test_changes_the_shared_world(world):
    world.org_a.name = "Renamed"
    world.org_a.save()
    world.customer_a.username = "someone_else"


def test_the_next_test_sees_the_world_as_built(world):
    assert world.org_a.name == f"Alpha Labs {MARKER_A}" and world.customer_a.username == "customer_a"
    world.org_a.refresh_from_db()
    assert world.org_a.name == f"Alpha Labs {MARKER_A}"


def test_each_process_moves_to_the_redis_database_of_its_index():
    assert worker_redis_url("redis://127.0.0.1:6379/7", 0) == "redis://127.0.0.1:6379/7"  # serial, or gw0
    assert worker_redis_url("redis://127.0.0.1:6379/7", 2) == "redis://127.0.0.1:6379/9"
    assert worker_redis_url("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"
    assert worker_redis_url("redis://127.0.0.1:6379/15", 1, default_db=15) == "redis://127.0.0.1:6379/14"


def _controller_then_worker(environ: dict, worker: str) -> tuple[dict, dict]:
    """What xdist does: the controller loads the settings first, each worker inherits its environment."""
    controller = dict(environ)
    move_redis_env(controller, None, reachable=lambda: True)
    inherited = dict(controller)
    move_redis_env(inherited, worker, reachable=lambda: True)
    return controller, inherited


def test_without_redis_url_each_worker_counts_down_from_the_default():
    controller, gw1 = _controller_then_worker({}, "gw1")
    assert controller["REDIS_URL"] == "redis://127.0.0.1:6379/15"
    assert gw1["REDIS_URL"] == "redis://127.0.0.1:6379/14"
    assert _controller_then_worker({}, "gw3")[1]["REDIS_URL"] == "redis://127.0.0.1:6379/12"
    # A Celery worker the test process starts inherits the moved environment and keeps it, whether or not it
    # inherits the xdist worker's name too.
    for name in ("gw1", None):
        celery = dict(gw1)
        move_redis_env(celery, name, reachable=lambda: True)
        assert celery["REDIS_URL"] == "redis://127.0.0.1:6379/14"


def test_a_given_redis_url_counts_up_per_worker():
    controller, gw2 = _controller_then_worker(
        {"REDIS_URL": "redis://127.0.0.1:6379/10", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/10"}, "gw2")
    assert controller["REDIS_URL"] == "redis://127.0.0.1:6379/10"
    assert gw2["REDIS_URL"] == gw2["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/12"
    assert "PORTAL_TEST_REDIS_DEFAULT" not in gw2
    celery = dict(gw2)
    move_redis_env(celery, None, reachable=lambda: True)
    assert celery["REDIS_URL"] == "redis://127.0.0.1:6379/12"


def test_without_redis_the_url_stays_unset():
    environ: dict = {}
    move_redis_env(environ, "gw1", reachable=lambda: False)
    assert "REDIS_URL" not in environ


def test_a_database_past_15_stops_the_run_with_the_fix():
    with pytest.raises(RuntimeError, match="Redis database 16 .*lower database or run fewer workers"):
        worker_redis_url("redis://127.0.0.1:6379/14", 2)


def test_this_process_writes_its_own_directory_and_broker():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    assert Path(settings.TEST_VAR_DIR).name == (worker or "main")
    if "HEALTH_PUSH_DIR" not in os.environ:
        assert Path(settings.HEALTH_PUSH_DIR).is_relative_to(settings.TEST_VAR_DIR)
    if settings.REDIS_URL:
        if os.environ.get("CELERY_BROKER_URL", settings.REDIS_URL) == settings.REDIS_URL:
            assert settings.CELERY_BROKER_URL == settings.REDIS_URL
        assert os.environ["PORTAL_TEST_REDIS_MOVED_FOR"] == (worker or "main")  # a worker it starts inherits it


class _Item:
    """What the ordering reads of a collected test: its file, module, markers and fixtures."""

    def __init__(self, path: str, name: str, markers=(), fixtures=()):
        self.path, self.name, self.markers, self.fixturenames = ROOT / path, name, set(markers), list(fixtures)
        self.module = path

    def getparent(self, cls):
        return self.module

    def get_closest_marker(self, name):
        return getattr(pytest.mark, name).mark if name in self.markers else None

    def __repr__(self):
        return f"{self.module}::{self.name}"


def test_each_part_of_the_run_starts_with_its_heaviest_modules_and_keeps_each_module_together():
    items = [
        _Item("tests/accounting/test_a.py", "light_1", fixtures=["db"]),
        _Item("tests/accounting/test_b.py", "commits", fixtures=["db", "transactional_db"]),
        _Item("tests/accounting/test_a.py", "light_2", fixtures=["db"]),
        _Item("tests/clusters/test_c.py", "light", fixtures=["world", "db"]),
        _Item("tests/clusters/test_c.py", "slow", markers=["slow"], fixtures=["world", "db"]),
        _Item("tests/e2e/test_d.py", "browser", fixtures=["live_server"]),
        _Item("tests/workloads/test_e.py", "no_database"),
        _Item("tests/workloads/test_e.py", "commits", fixtures=["db", "live_server"]),
        _Item("tests/data_safety/test_f.py", "no_database"),
        _Item("tests/health/test_g.py", "worker", fixtures=["transactional_db", "celery_worker_process"]),
    ]
    _heaviest_modules_first(items)
    assert [repr(i) for i in items] == [
        # no database: the heavy module first
        "tests/data_safety/test_f.py::no_database", "tests/workloads/test_e.py::no_database",
        # rolled back: the module with a test marked slow first, each module's tests together and in order
        "tests/clusters/test_c.py::light", "tests/clusters/test_c.py::slow",
        "tests/accounting/test_a.py::light_1", "tests/accounting/test_a.py::light_2",
        # committing, after every test that may read the migrations' rows: the browser walk first
        "tests/e2e/test_d.py::browser", "tests/health/test_g.py::worker",  # a browser walk, a real worker
        "tests/accounting/test_b.py::commits", "tests/workloads/test_e.py::commits",
    ]


def test_in_this_run_no_test_that_commits_comes_before_one_that_reads_the_migrations_rows(request):
    """The real collection: a test that commits (its fixtures' closure: ``transactional_db`` or ``live_server``,
    neither of which asks for ``db``) flushes every table when it ends, so it must follow every rolled-back test."""
    def commits(item):
        marker = item.get_closest_marker("django_db")
        return bool({"transactional_db", "live_server"} & set(item.fixturenames)) or bool(
            marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))

    seen_commit = None
    for item in request.session.items:
        if commits(item):
            seen_commit = seen_commit or item.nodeid
        elif "db" in item.fixturenames or item.get_closest_marker("django_db"):
            assert seen_commit is None, f"{item.nodeid} runs after {seen_commit}, which commits"
