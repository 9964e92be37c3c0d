"""The content types of enablement's models move to the ``enablement`` label, so the rows that point at them
(permissions and their grants, the admin log, timeline entries and other generic relations) keep pointing at them.
A database migrated from scratch has none yet: they are created after migrating, under the new label."""
from django.db import migrations

MODELS = ("enablementsession", "enablementattendance")


def _move(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    for model in MODELS:
        source = ContentType.objects.filter(app_label=old, model=model).first()
        if source is None:
            continue
        # A row under the other label exists only when post_migrate ran while part of the apps were migrated (a
        # partial rollback): it holds nothing but its own copies of the permissions, which the moved row has.
        duplicate = ContentType.objects.filter(app_label=new, model=model).first()
        if duplicate is not None:
            Permission.objects.filter(content_type=duplicate).delete()
            duplicate.delete()
        source.app_label = new
        source.save(update_fields=["app_label"])


def forwards(apps, schema_editor):
    _move(apps, "workloads", "enablement")


def backwards(apps, schema_editor):
    _move(apps, "enablement", "workloads")


class Migration(migrations.Migration):

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("enablement", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
