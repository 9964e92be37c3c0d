"""Program cycles (with their history), participation, carried rows, escalation targets and specialists move
from the engagement app into the core: state only, the tables and their rows stay where they are (``db_table``).
Their content types follow (app label ``engagement`` to ``portal``), so permissions, the admin log and the
history keep pointing at them."""
import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models

MOVED = ("cycle", "historicalcycle", "cycleparticipation", "cyclecarry", "escalationtarget", "specialist")


def _relabel(apps, old: str, new: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    taken = set(content_type.objects.filter(app_label=new, model__in=MOVED).values_list("model", flat=True))
    content_type.objects.filter(app_label=old, model__in=set(MOVED) - taken).update(app_label=new)


def move_content_types(apps, schema_editor):
    _relabel(apps, "engagement", "portal")


def move_content_types_back(apps, schema_editor):
    _relabel(apps, "portal", "engagement")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('engagement', '0009_cycle_history'),
        ('clusters', '0007_cluster_orchestrator_hyperpod_eks'),
        ('portal', '0010_user_language'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='EscalationTarget',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=64, unique=True)),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('kind', models.CharField(choices=[('specialists', 'Specialists'), ('service_team', 'Service team'), ('account', 'Account team')], max_length=16)),
                        ('description', models.TextField(blank=True)),
                    ],
                    options={
                        'db_table': 'engagement_escalationtarget',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Cycle',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('number', models.PositiveSmallIntegerField(unique=True)),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('starts_on', models.DateField(blank=True, null=True)),
                        ('ends_on', models.DateField(blank=True, null=True)),
                        ('status', models.CharField(choices=[('planned', 'Planned'), ('active', 'Active'), ('archived', 'Archived')], default='planned', max_length=16)),
                        ('lessons_carried', models.TextField(blank=True, help_text='Markdown: what the previous cycle taught, copied when it began.', verbose_name='lessons carried over')),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('blueprints', models.ManyToManyField(blank=True, related_name='cycles', to='clusters.blueprint')),
                    ],
                    options={
                        'db_table': 'engagement_cycle',
                        'ordering': ['-number'],
                    },
                ),
                migrations.CreateModel(
                    name='CycleParticipation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('continues', models.BooleanField(default=True, help_text='Takes part in the next cycle when it starts.')),
                        ('joined', models.DateTimeField(auto_now_add=True)),
                        ('cycle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participations', to='portal.cycle')),
                        ('lead_sas', models.ManyToManyField(blank=True, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participations', to='portal.organization')),
                    ],
                    options={
                        'db_table': 'engagement_cycleparticipation',
                        'ordering': ['cycle', 'organization__name'],
                    },
                ),
                migrations.AddField(
                    model_name='cycle',
                    name='organizations',
                    field=models.ManyToManyField(related_name='cycles', through='portal.CycleParticipation', to='portal.organization'),
                ),
                migrations.CreateModel(
                    name='HistoricalCycle',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('number', models.PositiveSmallIntegerField(db_index=True)),
                        ('name', models.CharField(db_index=True, max_length=100)),
                        ('starts_on', models.DateField(blank=True, null=True)),
                        ('ends_on', models.DateField(blank=True, null=True)),
                        ('status', models.CharField(choices=[('planned', 'Planned'), ('active', 'Active'), ('archived', 'Archived')], default='planned', max_length=16)),
                        ('created', models.DateTimeField(blank=True, editable=False)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical cycle',
                        'verbose_name_plural': 'historical cycles',
                        'db_table': 'engagement_historicalcycle',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='Specialist',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('target', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='specialists', to='portal.escalationtarget')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='specialist_of', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'engagement_specialist',
                        'ordering': ['target__name', 'user__username'],
                    },
                ),
                migrations.AddField(
                    model_name='escalationtarget',
                    name='members',
                    field=models.ManyToManyField(blank=True, related_name='escalation_teams', through='portal.Specialist', to=settings.AUTH_USER_MODEL),
                ),
                migrations.CreateModel(
                    name='CycleCarry',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('cluster', 'Cluster not deleted'), ('quota', 'Quota in force'), ('reservation', 'Capacity reservation in force'), ('trained_model', 'Model still in training')], max_length=16)),
                        ('object_id', models.PositiveBigIntegerField()),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('cycle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='carried_in', to='portal.cycle')),
                        ('from_cycle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='carried_out', to='portal.cycle')),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='portal.organization')),
                    ],
                    options={
                        'db_table': 'engagement_cyclecarry',
                        'ordering': ['cycle', 'kind', 'object_id'],
                        'indexes': [models.Index(fields=['from_cycle', 'kind'], name='carry_from_kind')],
                        'constraints': [models.UniqueConstraint(fields=('cycle', 'kind', 'object_id'), name='unique_cycle_carry')],
                    },
                ),
                migrations.AddConstraint(
                    model_name='cycleparticipation',
                    constraint=models.UniqueConstraint(fields=('cycle', 'organization'), name='unique_cycle_participation'),
                ),
                migrations.AddConstraint(
                    model_name='cycle',
                    constraint=models.UniqueConstraint(condition=models.Q(('status', 'active')), fields=('status',), name='one_active_cycle'),
                ),
                migrations.AddConstraint(
                    model_name='specialist',
                    constraint=models.UniqueConstraint(fields=('user', 'target'), name='unique_specialist_team'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
