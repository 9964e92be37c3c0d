"""Production settings pass Django's deployment checks with no warning."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_under_production_settings():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(
        DJANGO_SETTINGS_MODULE="portal.settings.production",
        SECRET_KEY="x" * 20 + "-production-grade-secret-key-with-enough-entropy-0123456789",
        ALLOWED_HOSTS="portal.example.org",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(DJANGO_SETTINGS_MODULE="portal.settings.production", ALLOWED_HOSTS="portal.example.org")
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
