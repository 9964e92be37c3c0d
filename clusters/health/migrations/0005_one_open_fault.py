"""Backfill the merged node table and each cluster's current health, close duplicate open faults
(left by concurrent ingestions before they were serialized), then enforce one open fault per key and
one node row per host; schedule the sweep of queued health pushes."""
from django.db import migrations, models
from django.db.models.functions import Coalesce

RANKS = {"healthy": 0, "degraded": 1, "reset_gpu": 2, "reboot": 3, "replace": 4}
SWEEP = "Send queued health pushes"
PANELS = ("uncorrectable_remapped_rows", "correctable_remapped_rows", "xid_errors", "row_remap_failures",
          "thermal_violations", "missing_gpus")


def backfill(apps, schema_editor):
    Report = apps.get_model("health", "HealthReport")
    Node = apps.get_model("health", "NodeHealth")
    Fault = apps.get_model("health", "GpuFault")
    State = apps.get_model("health", "ClusterHealthState")
    latest: dict[int, object] = {}
    for report in Report.objects.order_by("cluster_id", "-received_at", "-pk").defer("summary"):
        latest.setdefault(report.cluster_id, report)
    keep = {r.pk for r in latest.values()}
    Node.objects.exclude(report_id__in=keep).delete()
    for report in latest.values():
        Node.objects.filter(report_id=report.pk).update(cluster_id=report.cluster_id, seen_at=report.received_at)
    seen: set[tuple] = set()
    for fault in Fault.objects.filter(cleared_at__isnull=True).order_by("first_seen", "pk"):
        key = (fault.cluster_id, fault.hostname, fault.gpu, fault.device, fault.kind, fault.xid or 0)
        if key in seen:
            Fault.objects.filter(pk=fault.pk).update(cleared_at=fault.last_seen)
        seen.add(key)
    for cluster_id, report in latest.items():
        nodes = list(Node.objects.filter(cluster_id=cluster_id).values_list("verdict", flat=True))
        totals = {"node_count": report.node_count, "gpus_expected": report.gpus_expected,
                  "gpus_seen": report.gpus_seen, "unhealthy_gpus": report.missing_gpus + report.xid_errors,
                  **{f"nodes_{v}": getattr(report, f"nodes_{v}") for v in RANKS},
                  **{k: getattr(report, k) for k in PANELS}}
        faults = Fault.objects.filter(cluster_id=cluster_id, cleared_at__isnull=True)
        State.objects.update_or_create(cluster_id=cluster_id, defaults={
            "last_report_id": report.pk, "last_report_at": report.received_at, "nodes_known": len(nodes),
            "worst_rank": max((RANKS.get(v, 0) for v in nodes), default=-1), "open_faults": faults.count(),
            "critical_faults": faults.filter(severity="critical").count(),
            "oldest_seen": report.received_at if nodes else None, "state": report.state or {}, "totals": totals,
        })


def schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.update_or_create(name=SWEEP, defaults={
        "task": "clusters.health.tasks.sweep_pushes", "interval": every, "enabled": True, "queue": "health"})


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=SWEEP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("health", "0004_scale_ingestion"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="gpufault",
            constraint=models.UniqueConstraint(
                models.F("cluster"), models.F("hostname"), models.F("gpu"), models.F("device"), models.F("kind"),
                Coalesce("xid", 0), condition=models.Q(("cleared_at__isnull", True)), name="health_one_open_fault"),
        ),
        migrations.AddConstraint(
            model_name="nodehealth",
            constraint=models.UniqueConstraint(fields=("cluster", "hostname"), name="health_one_row_per_node"),
        ),
        migrations.RunPython(schedule, unschedule),
    ]
