"""Enablement's models, taken over from the workloads app with their tables (``workloads_enablementsession`` and
the others keep their names and rows). State only."""
import django.core.validators
import django.db.models.deletion
import portal.core.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('workloads', '0012_cycle_in_core'),
        ('portal', '0011_cycles_and_specialist_teams'),
        ('portal', '0010_user_language'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='EnablementSession',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('lecture', 'Lecture'), ('lab', 'Hands-on lab'), ('workshop', 'Workshop'), ('onboarding', 'Onboarding')], default='workshop', max_length=16)),
                        ('topic', models.CharField(max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('date', models.DateField()),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('audience', models.ManyToManyField(related_name='enablement_sessions', to='portal.organization')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('cycle', models.ForeignKey(blank=True, default=portal.core.models.active_cycle_id, help_text='The program cycle this belongs to (the active one by default).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='enablement_sessions', to='portal.cycle')),
                    ],
                    options={
                        'db_table': 'workloads_enablementsession',
                        'ordering': ['-date', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='EnablementAttendance',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('attendee', models.CharField(max_length=200)),
                        ('satisfaction', models.PositiveSmallIntegerField(blank=True, help_text='1 (poor) to 5 (excellent); empty when the attendee gave no score.', null=True, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(5)])),
                        ('comment', models.TextField(blank=True)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='portal.organization')),
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='attendances', to='enablement.enablementsession')),
                    ],
                    options={
                        'db_table': 'workloads_enablementattendance',
                        'ordering': ['organization__name', 'attendee'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('satisfaction__isnull', True), models.Q(('satisfaction__gte', 1), ('satisfaction__lte', 5)), _connector='OR'), name='satisfaction_1_to_5')],
                    },
                ),
            ],
        ),
    ]
