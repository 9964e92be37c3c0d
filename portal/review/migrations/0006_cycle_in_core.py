"""The program cycle is the core's now (``portal.Cycle``): the foreign keys to it change in the state only; the
columns and their constraints stay on the same table."""
import django.db.models.deletion
import portal.core.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('portal', '0011_cycles_and_specialist_teams'),
        ('review', '0005_week_new_resolved'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='weeklyreview',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='weekly_reviews', to='portal.cycle'),
                ),
            ],
            database_operations=[],
        ),
    ]
