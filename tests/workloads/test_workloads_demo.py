"""The demo seed holds the case study's figures and is idempotent."""
from django.core.management import call_command

from portal.core.models import Organization, User
from workloads import usage
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload


def test_demo_seeds_the_case_study_once(db):
    call_command("seed_demo")
    counts = [m.objects.count() for m in (Workload, InstanceQuota, CapacityReservation, QuotaChangeRequest)]
    history = Workload.history.count()
    call_command("seed_demo")
    assert [m.objects.count() for m in (Workload, InstanceQuota, CapacityReservation, QuotaChangeRequest)] == counts
    assert Workload.history.count() == history
    assert counts[0] == 12 and counts[3] == 2
    totals = {t.instance_type_name: t for t in usage.program_totals(usage.usage_rows(User.objects.get(username="pm")))}
    assert (totals["p5.48xlarge"].quota, totals["trn1.32xlarge"].quota) == (127, 24)
    assert totals["p5.48xlarge"].organizations + totals["trn1.32xlarge"].organizations == Organization.objects.count() == 12
    kotoba = Workload.objects.get(name="Kotoba-100B")
    assert (kotoba.parameters_billions, kotoba.target_instance_count, kotoba.frameworks[0]["name"]) == (100, 16, "megatron-lm")
    assert kotoba.history.count() == 2
    sakura = Workload.objects.get(organization__slug="sakura-vision")
    assert (sakura.target_instance_type, sakura.frameworks[0]["name"]) == ("trn1.32xlarge", "nxd")
    from datetime import timedelta

    from django.utils import timezone

    soon = timezone.localdate() + timedelta(days=14)
    assert CapacityReservation.objects.filter(end__lte=soon).count() == 3
    kinds = set(CapacityReservation.objects.values_list("kind", flat=True))
    assert kinds == {"odcr", "capacity_block", "training_plan"}
    # HyperPod organizations hold SageMaker training plans, not EC2 reservations.
    plans = CapacityReservation.objects.filter(kind="training_plan").select_related("organization")
    assert {r.organization.slug for r in plans} == {"sakura-vision", "hoshi-materials"}
    assert all(r.reservation_id.startswith("arn:aws:sagemaker:us-east-1:") for r in plans)
