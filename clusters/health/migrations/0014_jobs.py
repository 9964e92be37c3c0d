"""Health pushes and validation jobs are jobs of ``portal.core.jobs``: a push gets a heartbeat, a validation job says when
the broker took it (``dispatched_at``, its created time for a job that was dispatched) instead of whether."""
from django.db import migrations, models
from django.db.models import F


def to_time(apps, schema_editor):
    ValidationJob = apps.get_model("health", "ValidationJob")
    ValidationJob.objects.filter(dispatched=True).update(dispatched_at=F("created_at"))


def to_flag(apps, schema_editor):
    ValidationJob = apps.get_model("health", "ValidationJob")
    ValidationJob.objects.filter(dispatched_at__isnull=False).update(dispatched=True)


DISPATCHED_AT = models.DateTimeField(blank=True, null=True, help_text="When the broker took the task; empty until it did.")


class Migration(migrations.Migration):
    dependencies = [("health", "0013_validation_job_cancel")]

    operations = [
        migrations.AddField(model_name="healthpush", name="heartbeat",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AlterField(model_name="healthpush", name="dispatched_at", field=DISPATCHED_AT),
        migrations.AddField(model_name="validationjob", name="dispatched_at", field=DISPATCHED_AT),
        migrations.RunPython(to_time, to_flag),
        migrations.RemoveField(model_name="validationjob", name="dispatched"),
    ]
