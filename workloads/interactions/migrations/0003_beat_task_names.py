"""The periodic support sync is stored by django-celery-beat under the task's old name
(``workloads.support.sync_open_cases``): its row takes the new name. The old name stays registered as an alias, so
a row this migration did not see still runs."""
from django.db import migrations

RENAMED = {"workloads.support.sync_open_cases": "interactions.support.sync_open_cases"}


def forwards(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for old, new in RENAMED.items():
        PeriodicTask.objects.filter(task=old).update(task=new)


def backwards(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for old, new in RENAMED.items():
        PeriodicTask.objects.filter(task=new).update(task=old)


class Migration(migrations.Migration):

    dependencies = [
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("interactions", "0002_content_types"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
