# Two branches of the schema joined.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('engagement', '0010_cycles_and_teams_in_core'),
        ('engagement', '0010_slack_capture_job'),
    ]

    operations = [
    ]
