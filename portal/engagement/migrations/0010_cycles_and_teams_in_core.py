"""Program cycles, participation, carried rows, escalation targets and specialists leave this app for the core
(``portal.core.migrations.0011_cycles_and_specialist_teams`` takes them over with their tables): state only. The
foreign keys left here (outcomes' cycle, an escalation's target) point at the core's models."""
import django.db.models.deletion
import portal.core.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('clusters', '0008_cycle_in_core'),
        ('engagement', '0009_cycle_history'),
        ('portal', '0011_cycles_and_specialist_teams'),
        ('review', '0006_cycle_in_core'),
        ('workloads', '0012_cycle_in_core'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='cycle',
                    name='blueprints',
                ),
                migrations.RemoveField(
                    model_name='cycle',
                    name='organizations',
                ),
                migrations.AlterField(
                    model_name='trainedmodel',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='trained_models', to='portal.cycle'),
                ),
                migrations.RemoveField(
                    model_name='cycleparticipation',
                    name='cycle',
                ),
                migrations.AlterField(
                    model_name='milestone',
                    name='cycle',
                    field=models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='milestones', to='portal.cycle'),
                ),
                migrations.RemoveField(
                    model_name='cyclecarry',
                    name='cycle',
                ),
                migrations.RemoveField(
                    model_name='cyclecarry',
                    name='from_cycle',
                ),
                migrations.RemoveField(
                    model_name='cyclecarry',
                    name='organization',
                ),
                migrations.RemoveField(
                    model_name='cycleparticipation',
                    name='lead_sas',
                ),
                migrations.RemoveField(
                    model_name='cycleparticipation',
                    name='organization',
                ),
                migrations.RemoveField(
                    model_name='escalationtarget',
                    name='members',
                ),
                migrations.RemoveField(
                    model_name='specialist',
                    name='target',
                ),
                migrations.AlterField(
                    model_name='escalation',
                    name='target',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='escalations', to='portal.escalationtarget'),
                ),
                migrations.RemoveField(
                    model_name='historicalcycle',
                    name='history_user',
                ),
                migrations.RemoveField(
                    model_name='specialist',
                    name='user',
                ),
                migrations.DeleteModel(
                    name='Cycle',
                ),
                migrations.DeleteModel(
                    name='CycleCarry',
                ),
                migrations.DeleteModel(
                    name='CycleParticipation',
                ),
                migrations.DeleteModel(
                    name='EscalationTarget',
                ),
                migrations.DeleteModel(
                    name='HistoricalCycle',
                ),
                migrations.DeleteModel(
                    name='Specialist',
                ),
            ],
            database_operations=[],
        ),
    ]
