"""The demo seeds escalations to two teams and specialists who see only their team's queue."""
from django.core.management import call_command

from portal.engagement.models import Escalation, Specialist
from portal.models import User


def test_demo_escalations_to_two_teams(db):
    call_command("seed_demo")
    call_command("seed_demo")
    rows = list(Escalation.objects.select_related("target"))
    assert sorted(e.target.slug for e in rows) == ["ec2", "frameworks"]
    assert {e.state for e in rows} == {"accepted", "answered"}
    frameworks = User.objects.get(username="frameworks")
    assert Specialist.objects.filter(user=frameworks, target__slug="frameworks").exists()
    assert [e.target.slug for e in Escalation.objects.visible_to(frameworks)] == ["frameworks"]
