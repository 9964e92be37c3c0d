"""Schedule the daily expiry warnings with django-celery-beat, so every deployment gets them."""
from django.db import migrations

TASK = "workloads.warn_expiring"
NAME = "Warn before quotas and reservations end"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="9", day_of_week="*", day_of_month="*", month_of_year="*", timezone="Asia/Tokyo"
    )
    PeriodicTask.objects.update_or_create(name=NAME, defaults={"task": TASK, "crontab": crontab, "enabled": True})


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("workloads", "0002_workloads_quotas"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
