"""Schedule the launch-job sweep (django-celery-beat) every minute."""
from django.db import migrations


def schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.update_or_create(
        name="clusters: sweep launch jobs",
        defaults={"task": "clusters.tasks.sweep_launch_jobs", "interval": every, "queue": "launches", "enabled": True},
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name="clusters: sweep launch jobs").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("clusters", "0002_launch_pipeline"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
