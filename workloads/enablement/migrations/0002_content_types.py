"""The content types of enablement's models move to the ``enablement`` label, so the rows that point at them
(permissions and their grants, the admin log, timeline entries and other generic relations) keep pointing at them.
A database migrated from scratch has none yet: they are created after migrating, under the new label."""
from django.db import migrations

MODELS = ("enablementsession", "enablementattendance")


def _move(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MODELS:
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _move(apps, "workloads", "enablement")


def backwards(apps, schema_editor):
    _move(apps, "enablement", "workloads")


class Migration(migrations.Migration):

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("enablement", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
