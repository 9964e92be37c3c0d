"""The portal's alert rules and dashboard (clusters/blueprints/portal/): promtool accepts the rules, their unit
tests fire for a stalled sweep and an old queue (and stay silent when healthy), and every series they read is one
/metrics serves."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

DIRECTORY = Path(__file__).resolve().parents[2] / "clusters" / "blueprints" / "portal"
RULES, RULE_TESTS, DASHBOARD = DIRECTORY / "rules.yml", DIRECTORY / "rules_test.yml", DIRECTORY / "geniac-portal.json"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian: apt-get install prometheus)")


def _rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def _dashboard_exprs() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


@needs_promtool
def test_promtool_accepts_the_portal_rules():
    result = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


@needs_promtool
def test_promtool_unit_tests_pass():
    result = subprocess.run([PROMTOOL, "test", "rules", str(RULE_TESTS)], capture_output=True, text=True, cwd=DIRECTORY)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_unit_tests_cover_a_stalled_sweep_and_an_old_queue_firing_and_silent():
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    fired, silent = set(), set()
    for case in tests:
        for check in case["alert_rule_test"]:
            (fired if check["exp_alerts"] else silent).add(check["alertname"])
    assert {"PortalJobSweepStalled", "PortalQueueMessageOld", "PortalHealthPushesBehind"} <= fired & silent
    assert {rule["alert"] for rule in _rules()} <= fired  # every rule fires in some test


def test_every_series_the_rules_and_dashboard_read_is_served(client, db, settings):
    settings.METRICS_TOKEN = "rules-token"
    text = client.get(reverse("metrics"), HTTP_AUTHORIZATION="Bearer rules-token").content.decode()
    served = {family.name for family in text_string_to_metric_families(text)}
    used = set()
    for expr in [rule["expr"] for rule in _rules()] + _dashboard_exprs():
        used |= set(re.findall(r"\bportal_[a-z_]+", expr))
    assert used
    missing = {name for name in used if re.sub(r"_(total|bucket|count|sum)$", "", name) not in served}
    assert not missing, f"read by the rules or dashboard but not on /metrics: {sorted(missing)}"
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] == "geniac-portal" and len({panel["id"] for panel in board["panels"]}) == len(board["panels"])
