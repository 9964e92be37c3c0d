"""A Slack capture is a job of ``portal.core.jobs``: ``queued_at`` is its ``dispatched_at`` (the same fact under the name
every job uses), and it gets the lease and heartbeat fields."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("engagement", "0009_cycle_history")]

    operations = [
        migrations.RenameField(model_name="slackcapture", old_name="queued_at", new_name="dispatched_at"),
        migrations.AlterField(
            model_name="slackcapture", name="dispatched_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When the broker took the task; empty until it did."),
        ),
        migrations.AddField(model_name="slackcapture", name="heartbeat", field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="slackcapture", name="lease_until",
                            field=models.DateTimeField(blank=True, null=True)),
    ]
