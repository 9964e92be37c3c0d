"""`make test` runs on PostgreSQL whenever one answers (tests/pick_database.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "pick_database.py"


def load():
    spec = importlib.util.spec_from_file_location("pick_database", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_database_url_wins(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://someone@db.example:5432/portal")
    assert load().database_url(Path("/any")) == "postgres://someone@db.example:5432/portal"


def test_sqlite_when_asked(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("PORTAL_TEST_SQLITE", "1")
    assert load().database_url(Path("/any")) == ""


def test_postgres_named_per_checkout(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("PORTAL_TEST_SQLITE", raising=False)
    module = load()
    if not module.postgres_answers():
        pytest.skip("no PostgreSQL answers on 127.0.0.1:5432 with user postgres")
    one, two = module.database_url(Path("/clone/one")), module.database_url(Path("/clone/two"))
    assert one.startswith("postgres://postgres@127.0.0.1:5432/portal_")
    assert one != two
