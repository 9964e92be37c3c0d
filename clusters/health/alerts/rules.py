"""Prometheus alert rules and the Alertmanager definition of the observability stack, generated.

The rules come from :mod:`clusters.health.readers.thresholds` (the table the summary judges scrapes by) and the
XID catalog (:mod:`clusters.health.readers.xid`, one rule per consequence class), so an alert fires exactly when a
push of the same series would open a fault. Amazon Managed Service for Prometheus evaluates them
(``AWS::APS::RuleGroupsNamespace``) and its Alertmanager publishes to the stack's SNS topic with a message
template that prints the alerts as JSON (the shape of Alertmanager's webhook payload), which the portal's
SNS endpoint (``clusters.health.ingest.sns``) reads.

The blueprint carries the generated text (a CloudFormation template is static), so
``python -m clusters.health.alerts.rules`` rewrites it and a test fails when the two differ.
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from clusters.health.readers import thresholds as t
from clusters.health.readers import xid as xids

GROUP = "geniac-gpu-health"
XID_FAMILY = t.THRESHOLDS["xid"].family
PRESENCE_FAMILY = "DCGM_FI_DEV_GPU_TEMP"  # every GPU exports it: which GPUs exist
NOT_REPORTING = "not_reporting"
# What names one GPU across exporter restarts (absent labels group as empty, so a scrape without UUID is keyed on
# the index): the cluster the agent labels, the node, the GPU's UUID and index.
GPU_IDENTITY = "cluster, geniac_cluster_id, Hostname, hostname, UUID, gpu"
MISSING_GPU = "missing_gpu"
# XID consequence class -> alert name; codes of severity info open no fault, so they raise no alert.
XID_CLASSES = {
    xids.REPLACE_NODE: "GpuXidReplaceNode",
    xids.REBOOT_NODE: "GpuXidRebootNode",
    xids.RESET_GPU: "GpuXidResetGpu",
    xids.RESTART_JOB: "GpuXidRestartJob",
    xids.NONE: "GpuXidMonitor",
}
XID_UNKNOWN = "GpuXidUnknown"
_NAMES = {
    "uncorrectable_remapped_rows": "GpuUncorrectableRemappedRows",
    "row_remap_failure": "GpuRowRemapFailure",
    "thermal_violation": "GpuThermalViolation",
    "power_violation": "GpuPowerViolation",
    "ecc_dbe": "GpuDoubleBitEccErrors",
    "efa_rdma_read_err": "EfaRdmaReadErrors",
    "efa_rdma_write_err": "EfaRdmaWriteErrors",
    "efa_retrans_timeout": "EfaRetransmitTimeouts",
    "efa_unresponsive_remote": "EfaUnresponsiveRemote",
    "efa_impaired_remote": "EfaImpairedRemote",
    "efa_rx_drops": "EfaRxDrops",
}
BLUEPRINT = Path(__file__).resolve().parents[2] / "blueprints" / "observability.yaml"
# The same rules as a file of their own, beside their ``promtool test rules`` cases (``gpu-health.test.yml``).
RULES_FILE = BLUEPRINT.parent / "rules" / "gpu-health.rules.yml"
RULES_TEST = BLUEPRINT.parent / "rules" / "gpu-health.test.yml"


def _xid_codes(consequence: str) -> list[int]:
    return sorted(code for code, info in xids.XIDS.items()
                  if info.consequence == consequence and info.severity != xids.INFO)


def _any_of(codes: list[int]) -> str:
    return " or ".join(f"{XID_FAMILY} == {code}" for code in codes)


def _series(family: str) -> str:
    """A selector that matches the family with or without the ``_total`` suffix (exporters differ)."""
    return f'{{__name__=~"{family}(_total)?"}}'


def rules() -> list[dict]:
    """Every alert rule, in a stable order; ``labels.geniac_kind`` names the fault kind it stands for."""
    out: list[dict] = []
    for consequence, name in XID_CLASSES.items():
        codes = _xid_codes(consequence)
        severity = max((xids.XIDS[c].severity for c in codes), key=xids.SEVERITIES.index)
        out.append(_rule(name, _any_of(codes), "xid", severity,
                         f"XID {{{{ $value }}}} ({consequence}) on {{{{ $labels.Hostname }}}} GPU {{{{ $labels.gpu }}}}",
                         xid="{{ $value }}", xid_class=consequence))
    known = sorted(xids.XIDS)
    out.append(_rule(XID_UNKNOWN, f"{XID_FAMILY} > {t.THRESHOLDS['xid'].above:g} unless ({_any_of(known)})", "xid",
                     xids.WARNING, "unknown XID {{ $value }} on {{ $labels.Hostname }} GPU {{ $labels.gpu }}",
                     xid="{{ $value }}", xid_class="unknown"))
    for kind, name in _NAMES.items():
        row = t.THRESHOLDS[kind]
        value = f"increase({_series(row.family)}[{t.GROWTH_WINDOW}])" if row.growth else row.family
        out.append(_rule(name, f"{value} > {row.above:g}", kind, row.severity,
                         f"{kind.replace('_', ' ')} on {{{{ $labels.Hostname }}}}{{{{ $labels.hostname }}}}"))
    # A GPU is the node and the device, never the exporter that reports it: dcgm-exporter's pod, instance and
    # container labels change on every restart, and the same GPU under a new pod label is not missing.
    gpu = f"max by ({GPU_IDENTITY}) "
    out.append(_rule("GpuMissing", f"{gpu}(max_over_time({PRESENCE_FAMILY}[{t.MISSING_GPU_LOOKBACK}])) "
                                   f"unless {gpu}({PRESENCE_FAMILY})",
                     MISSING_GPU, xids.CRITICAL, "GPU {{ $labels.gpu }} of {{ $labels.Hostname }} stopped reporting",
                     for_="5m"))
    out.append(_rule("NodeNotReporting", "up == 0", NOT_REPORTING, xids.WARNING,
                     "{{ $labels.instance }} has not answered a scrape", for_=f"{t.NODE_SILENT_MINUTES}m"))
    return out


def _rule(name: str, expr: str, kind: str, severity: str, summary: str, for_: str = "0m", **annotations) -> dict:
    return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity, "geniac_kind": kind},
            "annotations": {"summary": summary, "value": "{{ $value }}", **annotations}}


def rules_text() -> str:
    """The rule file (Prometheus format) for ``AWS::APS::RuleGroupsNamespace.Data``."""
    return yaml.safe_dump({"groups": [{"name": GROUP, "rules": rules()}]}, sort_keys=False, width=200)


# Alertmanager's SNS message, as JSON in the shape of its webhook payload. Label and annotation values are
# printed with %q (Go-quoted), which is valid JSON for the printable text labels hold.
MESSAGE_TEMPLATE = (
    '{{ define "geniac.sns.message" }}{"version":"4","status":{{ printf "%q" .Status }},'
    '"receiver":{{ printf "%q" .Receiver }},"alerts":[{{ range $i, $a := .Alerts }}{{ if $i }},{{ end }}'
    '{"status":{{ printf "%q" $a.Status }},"fingerprint":{{ printf "%q" $a.Fingerprint }},'
    '"startsAt":{{ printf "%q" ($a.StartsAt.Format "2006-01-02T15:04:05Z07:00") }},'
    '"endsAt":{{ printf "%q" ($a.EndsAt.Format "2006-01-02T15:04:05Z07:00") }},'
    '"labels":{ {{- range $j, $l := $a.Labels.SortedPairs }}{{ if $j }},{{ end }}{{ printf "%q" $l.Name }}:'
    '{{ printf "%q" $l.Value }}{{ end -}} },'
    '"annotations":{ {{- range $j, $l := $a.Annotations.SortedPairs }}{{ if $j }},{{ end }}{{ printf "%q" $l.Name }}:'
    '{{ printf "%q" $l.Value }}{{ end -}} }}{{ end }}]}{{ end }}'
)


def alertmanager_definition() -> str:
    """``AWS::APS::Workspace.AlertManagerDefinition`` with ``${AlertTopic}`` and ``${AWS::Region}`` left for
    ``Fn::Sub``: every alert goes to the stack's SNS topic, grouped per node and device, resolved ones too."""
    config = {
        "route": {"receiver": "portal", "group_by": ["alertname", "cluster", "Hostname", "instance", "gpu", "device"],
                  "group_wait": "30s", "group_interval": "5m", "repeat_interval": "4h"},
        "receivers": [{"name": "portal", "sns_configs": [{
            "topic_arn": "${AlertTopic}", "sigv4": {"region": "${AWS::Region}"}, "send_resolved": True,
            "subject": "GENIAC {{ .Status }}: {{ .CommonLabels.alertname }}",
            "message": '{{ template "geniac.sns.message" . }}',
            "attributes": {"geniac": "alert"}}]}],
    }
    return yaml.safe_dump({
        "template_files": {"geniac.tmpl": MESSAGE_TEMPLATE},
        "alertmanager_config": yaml.safe_dump(config, sort_keys=False, width=200),
    }, sort_keys=False, width=400)


def _block(text: str, indent: int) -> str:
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


MARK = "# generated by python -m clusters.health.alerts.rules: {}"


def render_blueprint(source: str) -> str:
    """``source`` (the observability template) with its generated blocks replaced by the current text."""
    out, skipping = [], None
    for line in source.splitlines(keepends=True):
        if skipping is not None:
            if line.strip() == MARK.format("end"):
                out.append(_block(skipping, len(line) - len(line.lstrip())))
                out.append(line)
                skipping = None
            continue
        out.append(line)
        for name, text in (("rules", rules_text()), ("alertmanager", alertmanager_definition())):
            if line.strip() == MARK.format(name):
                skipping = text
    if skipping is not None:
        raise ValueError("a generated block is not closed")
    return "".join(out)


RULES_HEADER = "# generated by python -m clusters.health.alerts.rules (the rules of observability.yaml); tested by gpu-health.test.yml\n"


def main(argv: list[str]) -> int:
    """Rewrite the blueprint's generated blocks and the rule file (``--check``: only say whether they are current)."""
    source = BLUEPRINT.read_text()
    rendered = render_blueprint(source)
    rules_file = RULES_HEADER + rules_text()
    current = rendered == source and RULES_FILE.is_file() and RULES_FILE.read_text() == rules_file
    if "--check" in argv:
        print("current" if current else "stale: run python -m clusters.health.alerts.rules")
        return 0 if current else 1
    BLUEPRINT.write_text(rendered)
    RULES_FILE.parent.mkdir(exist_ok=True)
    RULES_FILE.write_text(rules_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
