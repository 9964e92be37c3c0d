"""API tokens move to django-rest-knox (expiring, hashed, revoked on sign-out). The old tokens never
expired and were stored in clear: they are deleted here, so a leaked one stops working; clients get a
new token from /api/auth/token/."""
from django.db import migrations


def revoke(apps, schema_editor):
    Token = apps.get_model("authtoken", "Token")
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("portal", "0003_timeline_visibility_index"),
        ("authtoken", "0004_alter_tokenproxy_options"),
        ("knox", "0009_extend_authtoken_field"),
    ]

    operations = [migrations.RunPython(revoke, migrations.RunPython.noop)]
