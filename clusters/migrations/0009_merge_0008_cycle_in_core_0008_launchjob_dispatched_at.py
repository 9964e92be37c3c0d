# Two branches of the schema joined.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('clusters', '0008_cycle_in_core'),
        ('clusters', '0008_launchjob_dispatched_at'),
    ]

    operations = [
    ]
