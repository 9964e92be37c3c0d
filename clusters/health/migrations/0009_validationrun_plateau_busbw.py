from django.db import migrations, models


def backfill(apps, schema_editor):
    """Runs stored before keep their plateau figure in the parsed result: copy it to the column."""
    ValidationRun = apps.get_model("health", "ValidationRun")
    changed = []
    for run in ValidationRun.objects.only("pk", "result").iterator(chunk_size=500):
        value = (run.result or {}).get("plateau_busbw")
        if value is not None:
            run.plateau_busbw = value
            changed.append(run)
    ValidationRun.objects.bulk_update(changed, ["plateau_busbw"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('health', '0008_fault_first_week'),
    ]

    operations = [
        migrations.AddField(
            model_name='validationrun',
            name='plateau_busbw',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
