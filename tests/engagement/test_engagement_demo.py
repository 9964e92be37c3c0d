"""The demo seeds escalations to two teams with specialists who see only their team's queue, cycle 2 archived
and cycle 3 active, and outcomes for several organizations."""
from django.core.management import call_command

from portal.core.models import Cycle, Specialist, User
from portal.engagement.models import Escalation, Milestone, TrainedModel


def test_demo_engagement(db):
    call_command("seed_demo")
    call_command("seed_demo")
    rows = list(Escalation.objects.select_related("target"))
    assert sorted(e.target.slug for e in rows) == ["ec2", "frameworks"]
    assert {e.state for e in rows} == {"accepted", "answered"}
    frameworks = User.objects.get(username="frameworks")
    assert Specialist.objects.filter(user=frameworks, target__slug="frameworks").exists()
    assert [e.target.slug for e in Escalation.objects.visible_to(frameworks)] == ["frameworks"]
    cycles = {c.number: c for c in Cycle.objects.all()}
    assert (cycles[2].status, cycles[3].status) == ("archived", "active") and len(cycles) == 2
    assert cycles[2].participations.count() == 10 and cycles[3].participations.count() == 12
    models = {m.name: m for m in TrainedModel.objects.all()}
    assert {"Stockmark-2-100B-Instruct-beta", "Llama 3.1 Shisa V2 405B"} <= set(models)
    assert models["Sakura-VL-32B"].instance_type == "trn1.32xlarge" and models["Sakura-VL-32B"].cycle == cycles[2]
    assert Milestone.objects.filter(cycle=cycles[2]).values("organization").distinct().count() >= 4
    from portal.engagement.models import SlackChannelLink

    assert SlackChannelLink.objects.get().organization.slug == "kotoba-labs"
    # The demo's current rows (quotas, clusters) belong to the active cycle.
    from workloads.models import InstanceQuota

    assert InstanceQuota.objects.exists() and not InstanceQuota.objects.exclude(cycle=cycles[3]).exists()
