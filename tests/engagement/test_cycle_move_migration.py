"""Program cycles and specialist teams move from the engagement app into the core without moving a row: the
tables stay, foreign keys from the other apps keep their values, and the content types (so permissions, the admin
log and the history) follow the models."""
import pytest
from django.contrib.contenttypes.models import ContentType

from tests.migrations import migrate, rolled_back_to

BEFORE = [("portal", "0010_user_language"), ("engagement", "0009_cycle_history")]
AFTER = [("engagement", "0010_cycles_and_teams_in_core")]
MOVED = ("cycle", "historicalcycle", "cycleparticipation", "cyclecarry", "escalationtarget", "specialist")


@pytest.mark.django_db(transaction=True)
def test_cycles_and_teams_become_core_models_with_their_rows():
    ids = dict(ContentType.objects.filter(app_label="portal", model__in=MOVED).values_list("model", "pk"))
    with rolled_back_to(BEFORE) as old:
        assert dict(ContentType.objects.filter(app_label="engagement", model__in=MOVED)
                    .values_list("model", "pk")) == ids
        Organization = old.get_model("portal", "Organization")
        User = old.get_model("portal", "User")
        Cycle = old.get_model("engagement", "Cycle")
        Target = old.get_model("engagement", "EscalationTarget")
        org = Organization.objects.create(name="Moved", slug="moved", aws_account_id="123456789012")
        cycle = Cycle.objects.create(number=91, name="Cycle 91", status="planned")
        old.get_model("engagement", "CycleParticipation").objects.create(cycle=cycle, organization=org)
        quota = old.get_model("workloads", "InstanceQuota").objects.create(
            organization=org, cycle=cycle, instance_type_name="p5.48xlarge", region="ap-northeast-1", count=2,
            start="2026-01-01", end="2026-12-31")
        target = Target.objects.create(slug="moved-team", name="Moved team", kind="specialists")
        user = User.objects.create(username="moved-specialist")
        old.get_model("engagement", "Specialist").objects.create(user=user, target=target)
        migrate(AFTER)
        from portal.core.models import Cycle as CoreCycle
        from portal.core.models import EscalationTarget, Specialist
        from workloads.models import InstanceQuota

        moved = CoreCycle.objects.get(number=91)
        assert moved.pk == cycle.pk and list(moved.organizations.values_list("slug", flat=True)) == ["moved"]
        assert InstanceQuota.objects.get(pk=quota.pk).cycle == moved
        assert Specialist.objects.get(user__username="moved-specialist").target == EscalationTarget.objects.get(
            slug="moved-team")
        assert dict(ContentType.objects.filter(app_label="portal", model__in=MOVED).values_list("model", "pk")) == ids
        assert not ContentType.objects.filter(app_label="engagement", model__in=MOVED).exists()
