"""The demo's reservations are known to the embedded endpoint: the cross-check reads AWS's answer for each, and
only the deliberately under-used one is flagged."""
import pytest
from django.utils import timezone

from clusters.accounting.models import CheckStatus, ReservationCheck
from sandbox import accelerator_hours as demo_accounting
from sandbox import program as demo
from sandbox import reservations as demo_reservations
from sandbox import workloads as demo_workloads
from sandbox.aws import control
from tests.clusters.factories_clusters import ClusterFactory
from workloads.models import CapacityReservation

pytestmark = pytest.mark.world_per_test


def _on(reservation_id: str, nodes: int):
    reservation = CapacityReservation.objects.get(reservation_id=reservation_id)
    return ClusterFactory(organization=reservation.organization, state="ready", node_count=nodes,
                          orchestrator="parallelcluster", instance_type="p5.48xlarge",
                          parameters={"cluster": {"CapacityReservationId": reservation_id}})


@pytest.mark.django_db
def test_every_demo_reservation_in_force_is_checked_and_one_is_flagged(aws):
    context = demo.seed_core()
    demo_workloads.seed(context)
    demo_accounting.seed(context)
    _on("cr-0a1b2c3d4e5f60001", 16)  # kotoba-p5-pretrain
    _on("cr-0a1b2c3d4e5f60006", 8)  # minato-p5: AWS sees 4 of them in the reservation
    demo_reservations.seed(context)
    demo_reservations.seed(context)  # again (each demo start): the same records, the same answers
    checks = {c.reservation.reservation_id: c for c in ReservationCheck.objects.select_related("reservation")}
    today = timezone.localdate()
    in_force = set(CapacityReservation.objects.filter(start__lte=today, end__gte=today)
                   .values_list("reservation_id", flat=True))
    assert len(checks) >= 9 and set(checks) == in_force
    assert {c.status for c in checks.values()} == {CheckStatus.OK}, [c.error for c in checks.values()]
    assert [rid for rid, c in checks.items() if c.flagged] == ["cr-0a1b2c3d4e5f60006"]
    minato = checks["cr-0a1b2c3d4e5f60006"]
    assert (minato.aws_total, minato.aws_in_use, minato.portal_held) == (16, 4, 8)
    kotoba = checks["cr-0a1b2c3d4e5f60001"]
    assert (kotoba.aws_total, kotoba.aws_in_use, kotoba.portal_held) == (16, 16, 16)
    plan = next(c for rid, c in checks.items() if rid.endswith("training-plan/sakura-trn1-cycle2"))
    assert (plan.aws_state, plan.aws_total, plan.aws_in_use) == ("Active", 16, 0)
    assert checks["cr-0acc00000000000b2"].aws_in_use == 2  # the idle cluster runs in its reservation, idle


@pytest.mark.django_db
def test_the_endpoint_refuses_a_reservation_it_cannot_record(aws):
    import urllib.error

    with pytest.raises(urllib.error.HTTPError) as refused:
        control.register_reservation(aws, account_id="111111111101", region="ap-northeast-1",
                                     reservation_id="cr-0bad", kind="odcr", instance_type="p5.48xlarge",
                                     availability_zone="ap-northeast-1a", count=2, in_use=3, days=5)
    assert refused.value.code == 400
    with pytest.raises(ValueError, match="not an endpoint URL"):
        control.register_reservation("file:///etc", account_id="1", region="r", reservation_id="x", kind="odcr",
                                     instance_type="p5.48xlarge", availability_zone="a", count=1, in_use=0, days=1)
