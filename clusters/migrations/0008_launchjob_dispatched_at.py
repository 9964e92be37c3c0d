"""A launch job says when the broker took it (``dispatched_at``) instead of whether (``dispatched``), as every job
of ``portal.core.jobs`` does. A job that was dispatched gets its created time."""
from django.db import migrations, models
from django.db.models import F


def to_time(apps, schema_editor):
    LaunchJob = apps.get_model("clusters", "LaunchJob")
    LaunchJob.objects.filter(dispatched=True).update(dispatched_at=F("created"))


def to_flag(apps, schema_editor):
    LaunchJob = apps.get_model("clusters", "LaunchJob")
    LaunchJob.objects.filter(dispatched_at__isnull=False).update(dispatched=True)


class Migration(migrations.Migration):
    dependencies = [("clusters", "0007_cluster_orchestrator_hyperpod_eks")]

    operations = [
        migrations.AddField(
            model_name="launchjob", name="dispatched_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When the broker took the task; empty until it did."),
        ),
        migrations.RunPython(to_time, to_flag),
        migrations.RemoveIndex(model_name="launchjob", name="launchjob_sweep"),
        migrations.RemoveField(model_name="launchjob", name="dispatched"),
        migrations.AddIndex(
            model_name="launchjob",
            index=models.Index(fields=["finished", "dispatched_at"], name="launchjob_sweep"),
        ),
    ]
