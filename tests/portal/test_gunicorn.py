"""The Dockerfile and docker-compose.yml run gunicorn with the same settings file, sized for 2 cores."""
import re
import runpy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_dockerfile_and_compose_share_one_gunicorn_config():
    cmd = re.search(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.M).group(1)
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]["command"]
    assert "gunicorn.conf.py" in cmd and web[:3] == ["gunicorn", "--config", "gunicorn.conf.py"]
    assert not any(flag in " ".join(web) + cmd for flag in ("--workers", "--timeout", "--threads"))
    # the health worker reads the bodies the web server stored from the bucket, not from a shared volume
    app = compose["x-app"]
    assert "volumes" not in app and app["environment"]["HEALTH_PUSH_STORAGE"] == "s3"
    assert app["environment"]["HEALTH_PUSH_S3_ENDPOINT_URL"] == "http://minio:9000" and "minio" in compose["services"]


def test_gunicorn_config_fits_two_cores(monkeypatch, tmp_path):
    for name in ("GUNICORN_WORKERS", "GUNICORN_THREADS", "GUNICORN_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    # The config names a metrics directory in os.environ when none is set; one set here is kept and undone after
    # the test, so the test process's own metrics stay in-process for the tests that read them.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert config["workers"] == 3 and config["worker_class"] == "gthread" and config["threads"] == 4
    assert 30 <= config["timeout"] <= 120 and config["max_requests"] > 0
