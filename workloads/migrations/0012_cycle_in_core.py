"""The program cycle is the core's now (``portal.Cycle``): the foreign keys to it change in the state only; the
columns and their constraints stay on the same table."""
import django.db.models.deletion
import portal.core.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('portal', '0011_cycles_and_specialist_teams'),
        ('workloads', '0011_cost_days'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='capacityreservation',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='capacity_reservations', to='portal.cycle'),
                ),
                migrations.AlterField(
                    model_name='enablementsession',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='enablement_sessions', to='portal.cycle'),
                ),
                migrations.AlterField(
                    model_name='historicalcapacityreservation',
                    name='cycle',
                    field=models.ForeignKey(blank=True, db_constraint=False, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='portal.cycle'),
                ),
                migrations.AlterField(
                    model_name='historicalinstancequota',
                    name='cycle',
                    field=models.ForeignKey(blank=True, db_constraint=False, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='portal.cycle'),
                ),
                migrations.AlterField(
                    model_name='instancequota',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='instance_quotas', to='portal.cycle'),
                ),
            ],
            database_operations=[],
        ),
    ]
