from django.db import migrations, models


class Migration(migrations.Migration):
    """A push's count of the worker's claims is ``claims``: ``attempts`` is the jobs' send number elsewhere."""

    dependencies = [
        ("health", "0018_agent_work_items"),
    ]

    operations = [
        migrations.RenameField(model_name="healthpush", old_name="attempts", new_name="claims"),
        migrations.AlterField(
            model_name="healthpush", name="claims",
            field=models.PositiveSmallIntegerField(default=0, help_text="How many times a worker claimed the push."),
        ),
    ]
