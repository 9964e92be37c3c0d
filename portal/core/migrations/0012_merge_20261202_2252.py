# Two branches of the schema joined.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('portal', '0011_cycles_and_specialist_teams'),
        ('portal', '0011_notification_delivery_job'),
    ]

    operations = [
    ]
