"""Interactions have their own app label: escalations' and Slack threads' and captures' foreign keys point at it.
State only: the tables and their rows stay."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engagement', '0011_merge_20261202_2252'),
        ('interactions', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='escalation',
                    name='interaction',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='escalations', to='interactions.interaction'),
                ),
                migrations.AlterField(
                    model_name='slackcapture',
                    name='interaction',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='interactions.interaction'),
                ),
                migrations.AlterField(
                    model_name='slackthread',
                    name='interaction',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='slack_thread', to='interactions.interaction'),
                ),
            ],
        ),
    ]
