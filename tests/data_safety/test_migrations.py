"""Migrations run forward on a copy of the demo database without losing rows.

A seeded demo database is copied; on the copy every app with more than one migration is taken back to
the migration before its latest and forward again, and every table keeps every row it had.
"""
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _manage(db: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_ENDPOINT_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(DJANGO_SETTINGS_MODULE="portal.settings.local", DATABASE_URL=f"sqlite:///{db}", DEBUG="false",
               CELERY_BROKER_URL="memory://")
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def _counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}  # noqa: S608


@pytest.mark.slow
def test_latest_migrations_keep_every_row_of_the_demo_database(tmp_path):
    demo = tmp_path / "demo.sqlite3"
    _manage(demo, "migrate", "--no-input")
    _manage(demo, "seed_demo")
    copy = tmp_path / "copy.sqlite3"
    shutil.copy(demo, copy)
    before = _counts(copy)
    assert before["portal_organization"] == 12 and before["workloads_workload"] >= 12
    plan = _manage(copy, "showmigrations", "--list")
    apps: dict[str, list[str]] = {}
    current = None
    for line in plan.splitlines():
        if not line.startswith(" "):
            current = line.strip()
            continue
        apps.setdefault(current, []).append(line.strip()[4:])
    ours = {app: names for app, names in apps.items() if app in ("portal", "workloads", "clusters", "health", "review", "engagement")}
    stepped = []
    for app, names in ours.items():
        # A merge migration has no single migration before it: going back to one of its parents undoes the other
        # branch and every app built on it (a new app depending on the merge is dropped whole), which no rollback
        # of one migration would do.
        if len(names) >= 2 and "_merge" not in names[-1]:
            _manage(copy, "migrate", app, names[-2], "--no-input")
            stepped.append(app)
    _manage(copy, "migrate", "--no-input")
    after = _counts(copy)
    assert stepped, "no app had two migrations to step through"
    lost = {t: (n, after.get(t)) for t, n in before.items() if after.get(t, -1) < n}
    assert not lost, f"rows lost going forward: {lost}"
