"""The migrations that made the six job models jobs of ``portal.core.jobs`` keep every row: a dispatched flag becomes a
time (the row's created time), ``queued_at`` is ``dispatched_at``, and the old sweeps' beat rows go."""
import pytest
from django.utils import timezone

from tests.migrations import migrate, rolled_back_to

BEFORE = [("clusters", "0007_cluster_orchestrator_hyperpod_eks"), ("health", "0013_validation_job_cancel"),
          ("remediation", "0001_initial"), ("portal", "0010_user_language"), ("engagement", "0009_cycle_history")]
AFTER = [("clusters", "0008_launchjob_dispatched_at"), ("health", "0014_jobs"),
         ("remediation", "0002_action_dispatched_at"), ("portal", "0011_notification_delivery_job"),
         ("engagement", "0010_slack_capture_job")]


@pytest.mark.django_db(transaction=True)
def test_dispatch_flags_become_times_and_queued_at_is_kept():
    with rolled_back_to(BEFORE) as old:
        Organization = old.get_model("portal", "Organization")
        Cluster = old.get_model("clusters", "Cluster")
        org = Organization.objects.create(name="Before", slug="before", aws_account_id="123456789012")
        cluster = Cluster.objects.create(organization=org, name="before-jobs", region="ap-northeast-1", node_count=2,
                                         instance_type="p5.48xlarge")
        LaunchJob = old.get_model("clusters", "LaunchJob")
        sent, unsent = LaunchJob.objects.create(cluster=cluster, dispatched=True), LaunchJob.objects.create(cluster=cluster)
        ValidationJob = old.get_model("health", "ValidationJob")
        validation = ValidationJob.objects.create(cluster=cluster, key="k", upload_base="http://x", dispatched=True)
        Action = old.get_model("remediation", "RemediationAction")
        now = timezone.now()
        approved = Action.objects.create(organization=org, cluster=cluster, kind="reboot", key="a", state="approved",
                                         approved_at=now, dispatched=True)
        proposed = Action.objects.create(organization=org, cluster=cluster, kind="reboot", key="b", dispatched=False)
        Delivery = old.get_model("portal", "NotificationDelivery")
        delivery = Delivery.objects.create(channel="email", event_kind="x", title="t", queued_at=now)
        Capture = old.get_model("engagement", "SlackCapture")
        capture = Capture.objects.create(team_id="T", slack_user_id="U", channel_id="C", message_ts="1", thread_ts="1")
        PeriodicTask = old.get_model("django_celery_beat", "PeriodicTask")
        Interval = old.get_model("django_celery_beat", "IntervalSchedule")
        every, _ = Interval.objects.get_or_create(every=60, period="seconds")
        PeriodicTask.objects.update_or_create(name="Send notifications the broker missed", defaults={
            "task": "portal.notifications.sweep_pending", "interval": every})
        migrate(AFTER)
        from django_celery_beat.models import PeriodicTask as NewPeriodicTask

        from clusters.health.models import ValidationJob as NewValidationJob
        from clusters.models import LaunchJob as NewLaunchJob
        from clusters.remediation.models import RemediationAction
        from portal.core.models import NotificationDelivery
        from portal.engagement.models import SlackCapture

        # Only the column these migrations wrote is read: the models of today may have columns added later.
        def dispatched_at(model, pk):
            return model.objects.filter(pk=pk).values_list("dispatched_at", flat=True).get()

        assert dispatched_at(NewLaunchJob, sent.pk) == sent.created
        assert dispatched_at(NewLaunchJob, unsent.pk) is None
        assert dispatched_at(NewValidationJob, validation.pk) == validation.created_at
        assert dispatched_at(RemediationAction, approved.pk) == now
        assert dispatched_at(RemediationAction, proposed.pk) is None
        assert dispatched_at(NotificationDelivery, delivery.pk) == now
        assert dispatched_at(SlackCapture, capture.pk) is None
        assert not NewPeriodicTask.objects.filter(name="Send notifications the broker missed").exists()
        migrate(BEFORE)  # and back: the flags again
        assert LaunchJob.objects.get(pk=sent.pk).dispatched and not LaunchJob.objects.get(pk=unsent.pk).dispatched
        assert Action.objects.get(pk=approved.pk).dispatched and not Action.objects.get(pk=proposed.pk).dispatched
        assert Delivery.objects.get(pk=delivery.pk).queued_at == now
