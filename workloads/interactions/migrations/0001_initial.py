"""Interactions' models, taken over from the workloads app with their tables (``workloads_interaction`` and the
others keep their names and rows). State only."""
import django.core.validators
import django.db.models.deletion
import django.utils.timezone
import re
import workloads.interactions.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('portal', '0010_user_language'),
        ('workloads', '0012_cycle_in_core'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ChallengeTag',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=64, unique=True)),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('description', models.TextField(blank=True)),
                        ('signatures', models.JSONField(blank=True, default=list)),
                    ],
                    options={
                        'db_table': 'workloads_challengetag',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Interaction',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('meeting', 'Meeting'), ('chat', 'Chat thread'), ('support_case', 'Support case'), ('onboarding', 'Onboarding session'), ('workshop', 'Workshop'), ('email', 'E-mail'), ('other', 'Other')], default='meeting', max_length=16)),
                        ('summary', models.CharField(max_length=200)),
                        ('body', models.TextField(blank=True, help_text='Markdown.')),
                        ('occurred_at', models.DateTimeField(default=django.utils.timezone.now, validators=[workloads.interactions.models.not_far_future])),
                        ('status', models.CharField(choices=[('open', 'Open'), ('waiting_customer', 'Waiting on customer'), ('waiting_aws', 'Waiting on AWS'), ('resolved', 'Resolved')], default='open', max_length=16)),
                        ('severity', models.CharField(choices=[('low', 'Low'), ('normal', 'Normal'), ('high', 'High'), ('critical', 'Critical')], default='normal', max_length=16)),
                        ('support_case_id', models.CharField(blank=True, max_length=64, validators=[django.core.validators.RegexValidator(re.compile('^case-\\d{11,12}-\\d{4}-[0-9A-Za-z]{16}$'), 'Expected case-<account>-<year>-<16 characters>.')], verbose_name='AWS support case id')),
                        ('resolution', models.TextField(blank=True)),
                        ('lesson', models.TextField(blank=True, verbose_name='lesson learned')),
                        ('visibility', models.CharField(choices=[('internal', 'Internal'), ('shared', 'Shared with the customer')], default='internal', max_length=16)),
                        ('escalated_at', models.DateTimeField(blank=True, null=True)),
                        ('first_response_at', models.DateTimeField(blank=True, null=True)),
                        ('resolved_at', models.DateTimeField(blank=True, null=True)),
                        ('last_activity_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('support_status', models.CharField(blank=True, max_length=32, verbose_name='AWS case status')),
                        ('sync_status', models.CharField(blank=True, choices=[('', 'Not synced'), ('ok', 'Synced'), ('failed', 'Sync failed')], default='', max_length=8)),
                        ('sync_error', models.TextField(blank=True)),
                        ('synced_at', models.DateTimeField(blank=True, null=True)),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('updated', models.DateTimeField(auto_now=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='interactions', to='portal.organization')),
                        ('owner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='owned_interactions', to=settings.AUTH_USER_MODEL)),
                        ('tags', models.ManyToManyField(blank=True, related_name='interactions', to='interactions.challengetag')),
                        ('watchers', models.ManyToManyField(blank=True, related_name='watched_interactions', to=settings.AUTH_USER_MODEL)),
                        ('workload', models.ForeignKey(blank=True, help_text='The workload this is about, if any.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='interactions', to='workloads.workload')),
                    ],
                    options={
                        'db_table': 'workloads_interaction',
                        'ordering': ['-occurred_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='InteractionComment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('comment', 'Comment'), ('created', 'Opened'), ('status', 'Status change'), ('owner', 'Reassignment'), ('escalation', 'Escalation'), ('aws', 'AWS Support communication'), ('fault', 'GPU fault')], default='comment', max_length=16)),
                        ('body', models.TextField(blank=True)),
                        ('old_value', models.CharField(blank=True, max_length=200)),
                        ('new_value', models.CharField(blank=True, max_length=200)),
                        ('internal', models.BooleanField(default=False, help_text='Internal entries are never shown to customers.')),
                        ('external_id', models.CharField(blank=True, help_text='Identity of a synced AWS communication.', max_length=200)),
                        ('created', models.DateTimeField(default=django.utils.timezone.now)),
                        ('author', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('interaction', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='history', to='interactions.interaction')),
                    ],
                    options={
                        'db_table': 'workloads_interactioncomment',
                        'ordering': ['created', 'id'],
                    },
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(fields=['organization', 'status', 'occurred_at'], name='interaction_org_open'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(fields=['owner', 'status', 'occurred_at'], name='interaction_owner_open'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(condition=models.Q(('status__in', ('open', 'waiting_customer', 'waiting_aws'))), fields=['organization', 'occurred_at'], name='interaction_open_only'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(condition=models.Q(('resolved_at__isnull', False)), fields=['resolved_at', 'organization'], name='interaction_resolved_at'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(fields=['organization', '-occurred_at'], name='interaction_org_latest'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(condition=models.Q(('status__in', ('open', 'waiting_customer', 'waiting_aws'))), fields=['occurred_at', 'id'], name='interaction_open_oldest'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(condition=models.Q(('lesson', ''), _negated=True), fields=['-updated', '-id'], name='interaction_lessons'),
                ),
                migrations.AddIndex(
                    model_name='interaction',
                    index=models.Index(fields=['occurred_at', 'organization', 'id'], name='interaction_occurred_at'),
                ),
                migrations.AddConstraint(
                    model_name='interactioncomment',
                    constraint=models.UniqueConstraint(condition=models.Q(('external_id', ''), _negated=True), fields=('interaction', 'external_id'), name='unique_synced_communication'),
                ),
            ],
        ),
    ]
