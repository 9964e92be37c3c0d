"""Interactions and enablement are apps of their own (labels ``interactions`` and ``enablement``): their models
leave this app's state. State only: the tables keep their names and rows, and the new apps' first migrations
take them over."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('enablement', '0001_initial'),
        ('interactions', '0001_initial'),
        ('engagement', '0012_interactions_app'),
        ('health', '0015_interactions_app'),
        ('review', '0007_interactions_app'),
        ('workloads', '0012_cycle_in_core'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='interaction',
                    name='tags',
                ),
                migrations.RemoveField(
                    model_name='enablementattendance',
                    name='organization',
                ),
                migrations.RemoveField(
                    model_name='enablementattendance',
                    name='session',
                ),
                migrations.RemoveField(
                    model_name='enablementsession',
                    name='audience',
                ),
                migrations.RemoveField(
                    model_name='enablementsession',
                    name='created_by',
                ),
                migrations.RemoveField(
                    model_name='enablementsession',
                    name='cycle',
                ),
                migrations.RemoveField(
                    model_name='interaction',
                    name='created_by',
                ),
                migrations.RemoveField(
                    model_name='interaction',
                    name='organization',
                ),
                migrations.RemoveField(
                    model_name='interaction',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='interaction',
                    name='watchers',
                ),
                migrations.RemoveField(
                    model_name='interaction',
                    name='workload',
                ),
                migrations.RemoveField(
                    model_name='interactioncomment',
                    name='interaction',
                ),
                migrations.RemoveField(
                    model_name='interactioncomment',
                    name='author',
                ),
                migrations.DeleteModel(
                    name='ChallengeTag',
                ),
                migrations.DeleteModel(
                    name='EnablementAttendance',
                ),
                migrations.DeleteModel(
                    name='EnablementSession',
                ),
                migrations.DeleteModel(
                    name='Interaction',
                ),
                migrations.DeleteModel(
                    name='InteractionComment',
                ),
            ],
        ),
    ]
