"""Interactions have their own app label: the tag mentions' foreign keys point at it. State only: the tables
and their rows stay."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('interactions', '0001_initial'),
        ('review', '0006_cycle_in_core'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='tagmention',
                    name='interaction',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='interactions.interaction'),
                ),
                migrations.AlterField(
                    model_name='tagmention',
                    name='tag',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='interactions.challengetag'),
                ),
            ],
        ),
    ]
