"""dcgm-exporter's counters file carries every field the portal reads, and the stack passes it to dcgm-exporter.

The list of fields is derived from the readers themselves (the families the health summary folds, the pull's
presence family, the dashboard signals, the alert rules, the Grafana dashboards, and any ``DCGM_*`` name a module
of ``clusters/`` names as a constant), so adding a reader without its counter fails here.
"""
from __future__ import annotations

import ast
import csv
import re
from pathlib import Path

from clusters.health.alerts import dashboards
from clusters.health.alerts import rules as alerts
from clusters.health.ingest import pull as prometheus_pull
from clusters.health.readers import prometheus, summary
from clusters.software import release
from tests.clusters.script_sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = release.SOFTWARE_DIR / release.CURRENT_VERSION / "scripts"
COUNTERS = SCRIPTS / "dcgm-counters.csv"
# Names dcgm-exporter's own counters files know (tests/clusters/dcgm_exporter_fields.txt says where from).
KNOWN = {line.strip() for line in (Path(__file__).parent / "dcgm_exporter_fields.txt").read_text().splitlines()
         if line.strip() and not line.startswith("#")}
# A name the readers accept that is not a field: dcgm-exporter's docs print DCGM_EXP_XID_ERRORS_COUNT's
# samples under it, so the field to export is the count.
ALIASES = {"DCGM_FI_DEV_XID_ERRORS_ACTIVE": "DCGM_EXP_XID_ERRORS_COUNT"}
NAME = re.compile(r"DCGM_(?:FI|EXP)_[A-Z0-9_]+")


def counters() -> dict[str, tuple[str, str]]:
    """The file as dcgm-exporter reads it: field -> (type, help); '#' lines are comments."""
    fields = {}
    for row in csv.reader(COUNTERS.read_text().splitlines()):
        if not row or not row[0].strip() or row[0].lstrip().startswith("#"):
            continue
        assert len(row) >= 3, row
        name, kind, text = row[0].strip(), row[1].strip(), ",".join(row[2:]).strip()
        assert name not in fields, f"{name} twice"
        fields[name] = (kind, text)
    return fields


def _constants_in_clusters() -> set[str]:
    """Every string constant of a clusters/ module that is exactly a DCGM name (what a reader would look up)."""
    names = set()
    for path in (ROOT / "clusters").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                names.add(node.value)
    return names


def read_fields() -> set[str]:
    """The DCGM fields the portal reads, from the readers."""
    names = {n.removesuffix("_total") for n in prometheus.READ_FAMILIES if n.startswith("DCGM_")}
    names.add(prometheus_pull.PRESENCE)
    names |= {family for _, families, _ in summary.SIGNALS for family in families}
    for expr in [r["expr"] for r in alerts.rules()] + dashboards.expressions():
        names |= set(NAME.findall(expr))
    names |= _constants_in_clusters()
    return {ALIASES.get(n, n) for n in names}


def test_the_counters_file_carries_every_field_the_readers_read():
    fields = counters()
    wanted = read_fields()
    # The list: health, the utilization of capacity accounting, throttling, NVLink, XID, rows, ECC.
    assert {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_THERMAL_VIOLATION",
            "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_EXP_XID_ERRORS_COUNT", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_GPU_TEMP"} <= wanted
    assert sorted(wanted - set(fields)) == []
    assert set(fields) <= KNOWN, f"not dcgm-exporter fields: {sorted(set(fields) - KNOWN)}"
    assert {kind for kind, _ in fields.values()} <= {"gauge", "counter", "label"}
    # Counters are counters (the summary and the rules take their growth).
    for name in ("DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"):
        assert fields[name][0] == "counter"


def test_a_reader_of_a_new_field_fails_the_check(monkeypatch):
    monkeypatch.setitem(prometheus.DCGM_FIELDS, "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", prometheus.THERMAL)
    monkeypatch.setattr(prometheus, "READ_FAMILIES", prometheus.READ_FAMILIES | {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION"})
    assert "DCGM_FI_DEV_SYNC_BOOST_VIOLATION" in read_fields() - set(counters())


def test_the_stack_installs_the_file_and_passes_it_to_dcgm_exporter(tmp_path):
    box = Sandbox(tmp_path, present=("nvidia-smi",))
    counters_dir = tmp_path / "etc-dcgm"
    result = box.run("install_exporters.sh", env={"DCGM_COUNTERS_DIR": str(counters_dir)})
    assert result.returncode == 0, result.stderr
    assert (counters_dir / "geniac-counters.csv").read_bytes() == COUNTERS.read_bytes()
    run = next(line for line in box.calls() if line.startswith("docker run") and "dcgm-exporter:" in line)
    assert f"-v {counters_dir}:/etc/dcgm-exporter:ro" in run
    assert run.endswith("-f /etc/dcgm-exporter/geniac-counters.csv")
    # ParallelCluster downloads each custom action alone: the script fetches the file from the prefix.
    fresh = Sandbox(tmp_path / "pc", present=("nvidia-smi",), with_files=False)
    fresh.run("install_exporters.sh", "s3://b1/geniac/c1/software/", env={"DCGM_COUNTERS_DIR": str(counters_dir)})
    assert "aws s3 cp s3://b1/geniac/c1/software/dcgm-counters.csv" in "\n".join(fresh.calls())


def test_the_bundle_uploads_the_counters_file():
    objects = release.bundle("parallelcluster", {"ClusterName": "pc1"}, region="us-east-1")
    assert objects["geniac/pc1/software/dcgm-counters.csv"] == COUNTERS.read_bytes()
