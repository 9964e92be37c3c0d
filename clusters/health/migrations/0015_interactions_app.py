"""Interactions have their own app label: a GPU fault's interaction points at it. State only: the tables and
their rows stay."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('health', '0014_jobs'),
        ('interactions', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='gpufault',
                    name='interaction',
                    field=models.ForeignKey(blank=True, help_text='The support interaction that follows this fault (same organization as the cluster).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='gpu_faults', to='interactions.interaction'),
                ),
            ],
        ),
    ]
