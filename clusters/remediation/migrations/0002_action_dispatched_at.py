"""A remediation action says when the broker took it (``dispatched_at``) instead of whether, as every job of
``portal.core.jobs`` does. An action that was dispatched gets its approval time (its proposal time if it has none)."""
from django.db import migrations, models
from django.db.models import F


def to_time(apps, schema_editor):
    RemediationAction = apps.get_model("remediation", "RemediationAction")
    dispatched = RemediationAction.objects.filter(dispatched=True)
    dispatched.filter(approved_at__isnull=False).update(dispatched_at=F("approved_at"))
    dispatched.filter(approved_at__isnull=True).update(dispatched_at=F("proposed_at"))


def to_flag(apps, schema_editor):
    RemediationAction = apps.get_model("remediation", "RemediationAction")
    RemediationAction.objects.filter(dispatched_at__isnull=False).update(dispatched=True)


class Migration(migrations.Migration):
    dependencies = [("remediation", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="remediationaction", name="dispatched_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When the broker took the task; empty until it did."),
        ),
        migrations.RunPython(to_time, to_flag),
        migrations.RemoveField(model_name="remediationaction", name="dispatched"),
    ]
