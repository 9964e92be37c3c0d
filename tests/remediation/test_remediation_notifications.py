"""Every proposal, approval, step and result of a remediation is notified: e-mail and the Slack webhook of each
setting that wants it, and a reply in the Slack thread of the interaction the fault is linked to."""
from __future__ import annotations

import pytest
from django.core import mail

from clusters.health.models import GpuFault
from clusters.remediation import services
from clusters.remediation.choices import ActionState
from portal.core import notifications
from portal.core.models import NotificationDelivery, NotificationSetting
from portal.engagement.models import SlackChannelLink, SlackThread
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, clean_report, hyperpod_cluster
from tests.remediation.test_remediation import run
from workloads.interactions.models import Interaction


@pytest.mark.django_db
def test_each_proposal_approval_step_and_result_is_mailed_posted_and_told_in_the_faults_thread(world, aws):
    NotificationSetting.objects.create(name="ops", organization=world.org_a, email_recipients="ops@example.com",
                                       slack_webhook_url="https://hooks.slack.com/services/T0/B0/x",
                                       min_severity="low")
    RemediationPolicyFactory(organization=world.org_a, mode="approval")
    cluster = hyperpod_cluster(world.org_a)
    interaction = Interaction.objects.create(organization=world.org_a, kind="other", summary="GPU 2 fell off the bus",
                                             visibility="shared")
    GpuFault.objects.filter(cluster=cluster, hostname=FAULTY).update(interaction=interaction)
    link = SlackChannelLink.objects.create(channel_id="C0REMEDY", organization=world.org_a)
    SlackThread.objects.create(interaction=interaction, channel=link, thread_ts="1700000000.000100")

    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    services.approve(action, world.customer_a)
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    clean_report(cluster)
    action = run(action)
    assert action.state == ActionState.DONE

    def kinds(channel: str) -> list[str]:
        rows = NotificationDelivery.objects.filter(channel=channel, event_kind__startswith="remediation.")
        return list(rows.order_by("pk").values_list("event_kind", flat=True))

    expected = ["remediation.proposed", "remediation.approved", "remediation.running", "remediation.step",
                "remediation.step", "remediation.step", "remediation.verifying", "remediation.done"]
    assert kinds("email") == kinds("slack") == kinds("thread") == expected
    titles = list(NotificationDelivery.objects.filter(channel="email", event_kind="remediation.step")
                  .order_by("pk").values_list("title", flat=True))
    assert "Found the nodes in HyperPod" in titles[0] and "HyperPod accepted the replace" in titles[1]
    assert NotificationDelivery.objects.filter(channel="thread").first().payload["thread"] == \
        SlackThread.objects.get().pk

    done = NotificationDelivery.objects.get(channel="email", event_kind="remediation.done")
    notifications.deliver.apply(args=[done.pk])
    assert mail.outbox and "done: the nodes reported without the fault" in mail.outbox[-1].subject


@pytest.mark.django_db
def test_a_refusal_is_notified_with_the_rule_and_steps_can_be_left_out_by_severity(world):
    NotificationSetting.objects.create(name="results only", organization=world.org_a,
                                       email_recipients="ops@example.com", min_severity="normal")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    refused, _ = services.propose(cluster, kind="drain", nodes=[FAULTY], actor=world.lead_a)
    assert refused.refused_rule == "agent_absent"
    proposed, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    rows = NotificationDelivery.objects.filter(channel="email")
    assert list(rows.order_by("pk").values_list("event_kind", flat=True)) == ["remediation.proposed"]
    NotificationSetting.objects.update(min_severity="low")
    # Another node: the same refusal again within the window would be counted on the first, not told again.
    services.propose(cluster, kind="drain", nodes=["ip-10-1-0-11"], actor=world.lead_a)
    refusal = rows.get(event_kind="remediation.refused")
    assert "refused" in refusal.title and "agent on the cluster's controller has not contacted" in refusal.payload["body"]
    assert proposed.state == ActionState.PROPOSED
