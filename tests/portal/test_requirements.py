"""Production installs requirements.lock alone: it holds no test or demo tool, agrees with the development lock,
and the whole application (every URL, every Celery task) imports without the packages it leaves out."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV_ONLY = ("moto", "pytest", "pytest-django", "pytest-xdist", "factory-boy", "ruff", "cfn-lint", "schemathesis",
            "playwright", "flask", "pip-tools")


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_the_production_lock_holds_no_development_tool_and_agrees_with_the_development_lock():
    prod, dev = _pins("requirements.lock"), _pins("requirements-dev.lock")
    assert "django" in prod and "celery" in prod and "gunicorn" in prod
    assert not set(DEV_ONLY) & set(prod), set(DEV_ONLY) & set(prod)
    assert {"moto", "pytest", "playwright"} <= set(dev)
    assert {name: (pin, dev.get(name)) for name, pin in prod.items() if dev.get(name) != pin} == {}
    assert "requirements.lock" in (ROOT / "Dockerfile").read_text()
    assert "requirements-dev.lock" not in (ROOT / "Dockerfile").read_text()


BLOCKER = """
import importlib.abc, sys
BLOCKED = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is not installed in production")
sys.meta_path.insert(0, Block())
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # imports every view
from portal.celery import app
app.loader.import_default_modules()
app.autodiscover_tasks(force=True)
print(len(app.tasks), "tasks")
"""


def test_the_application_imports_without_development_packages():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="portal.settings.production",
               SECRET_KEY="x" * 20 + "-production-grade-secret-key-with-enough-entropy-0123456789",
               ALLOWED_HOSTS="portal.example.org")
    blocked = ["moto", "pytest", "factory", "playwright", "schemathesis", "flask", "cfnlint"]
    result = subprocess.run([sys.executable, "-c", BLOCKER.format(blocked=blocked)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "tasks" in result.stdout
