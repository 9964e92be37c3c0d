"""A notification delivery is a job of ``portal.core.jobs``: ``queued_at`` is its ``dispatched_at`` (the same fact under
the name every job uses), and it gets the lease and heartbeat fields. The six periodic sweeps are one
(``portal.jobs.sweep``): beat's database scheduler keeps the rows it wrote for the old entries, so they go."""
from django.db import migrations, models

OLD_SWEEPS = [
    "clusters: sweep launch jobs",
    "Send notifications the broker missed",
    "Log Slack threads the broker missed",
    "Send queued health pushes",
    "Remediation: automatic proposals, actions the broker missed",
    "Validation: time out silent jobs, send what the broker missed",
]


def remove_old_sweeps(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name__in=OLD_SWEEPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("portal", "0010_user_language"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("clusters", "0003_sweep_schedule"),  # these two wrote rows for two of the old names
        ("health", "0005_one_open_fault"),
    ]

    operations = [
        migrations.RenameField(model_name="notificationdelivery", old_name="queued_at", new_name="dispatched_at"),
        migrations.AlterField(
            model_name="notificationdelivery", name="dispatched_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When the broker took the task; empty until it did."),
        ),
        migrations.AddField(model_name="notificationdelivery", name="heartbeat",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="notificationdelivery", name="lease_until",
                            field=models.DateTimeField(blank=True, null=True)),
        # Beat writes the new entry when it starts; the old rows are not written back on the way down.
        migrations.RunPython(remove_old_sweeps, migrations.RunPython.noop),
    ]
