"""The program cycle is the core's now (``portal.Cycle``): the foreign keys to it change in the state only; the
columns and their constraints stay on the same table."""
import django.db.models.deletion
import portal.core.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('clusters', '0007_cluster_orchestrator_hyperpod_eks'),
        ('portal', '0011_cycles_and_specialist_teams'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='cluster',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='clusters', to='portal.cycle'),
                ),
            ],
            database_operations=[],
        ),
    ]
