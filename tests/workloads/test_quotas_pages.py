"""Quota pages per role: used / total bars, program totals, expiring reservations, forms refusing bad input."""
import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.clusters.factories_clusters import ClusterFactory
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory
from workloads.models import CapacityReservation


@pytest.fixture
def quota(world):
    return InstanceQuotaFactory(organization=world.org_a, count=16, notes="Cycle 2")


def test_customer_reads_own_quota_with_bar_but_cannot_edit(client, world, quota):
    ClusterFactory(organization=world.org_a, name="c1", node_count=4, state="ready")
    client.force_login(world.customer_a)
    body = client.get(reverse("workloads:quota_list")).content.decode()
    assert 'value="4" max="16"' in body and "4 / 16" in body
    assert reverse("workloads:quota_edit", kwargs={"pk": quota.pk}) not in body
    assert client.get(reverse("workloads:quota_edit", kwargs={"pk": quota.pk})).status_code == 403
    assert client.post(reverse("workloads:quota_edit", kwargs={"pk": quota.pk}), {"count": 99}).status_code == 403
    assert client.get(reverse("workloads:quota_add")).status_code == 403
    quota.refresh_from_db()
    assert quota.count == 16


def test_foreign_customer_sees_nothing_of_a(client, world, quota):
    InstanceQuotaFactory(organization=world.org_b, count=8, instance_type_name="trn1.32xlarge", region="us-east-1")
    client.force_login(world.customer_b)
    body = client.get(reverse("workloads:quota_list")).content.decode()
    assert "trn1.32xlarge" in body and "Alpha Labs" not in body and "Cycle 2" not in body


def test_program_manager_edits_and_the_form_refuses_bad_input(client, world, quota):
    ClusterFactory(organization=world.org_a, name="c1", node_count=12, state="ready")
    client.force_login(world.pm)
    url = reverse("workloads:quota_edit", kwargs={"pk": quota.pk})
    base = {"organization": world.org_a.pk, "instance_type_name": "p5.48xlarge", "region": "ap-northeast-1",
            "start": quota.start.isoformat(), "end": quota.end.isoformat(), "notes": ""}
    body = client.post(url, {**base, "count": 8}).content.decode()
    assert "hold 12 × p5.48xlarge in ap-northeast-1; this change would leave a quota of 8 today" in body
    body = client.post(url, {**base, "count": 0}).content.decode()
    assert "Must be at least 1." in body
    body = client.post(url, {**base, "count": 20, "end": "2020-01-01"}).content.decode()
    assert "The end date is before the start date." in body
    body = client.post(url, {**base, "count": 20, "region": "mars-1"}).content.decode()
    assert "Select a valid choice" in body
    quota.refresh_from_db()
    assert quota.count == 16
    assert client.post(url, {**base, "count": 20}).status_code == 302
    quota.refresh_from_db()
    assert quota.count == 20


def test_reservation_form_bad_input(client, world, quota):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0")
    client.force_login(world.pm)
    today = timezone.localdate()
    base = {"organization": world.org_a.pk, "reservation_id": "cr-0123456789abcdef0", "kind": "odcr",
            "instance_type_name": "p5.48xlarge", "count": 4, "region": "ap-northeast-1", "availability_zone": "ap-northeast-1a",
            "start": today.isoformat(), "end": (today + datetime.timedelta(days=10)).isoformat(), "quota": quota.pk}
    url = reverse("workloads:reservation_add")
    assert "already recorded for dates that overlap" in client.post(url, base).content.decode()
    assert "is not in ap-northeast-1" in client.post(url, {**base, "reservation_id": "cr-0000000000000000f",
                                                          "availability_zone": "us-east-1a"}).content.decode()
    assert "Must be at least 1." in client.post(url, {**base, "reservation_id": "cr-0000000000000000f", "count": -2}).content.decode()
    assert "looks like cr-" in client.post(url, {**base, "reservation_id": "r-1"}).content.decode()
    assert CapacityReservation.objects.count() == 1
    assert client.post(url, {**base, "reservation_id": "cr-0000000000000000f"}).status_code == 302
    assert CapacityReservation.objects.count() == 2


def test_expiring_reservations_and_totals(client, world, quota):
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-000000000000000a1",
                               end=timezone.localdate() + datetime.timedelta(days=5))
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-000000000000000a2",
                               end=timezone.localdate() + datetime.timedelta(days=60))
    InstanceQuotaFactory(organization=world.org_b, count=8)
    client.force_login(world.pm)
    body = client.get(reverse("workloads:quota_list")).content.decode()
    assert "cr-000000000000000a1" in body and "cr-000000000000000a2" not in body and "(5 days)" in body
    assert 'aria-label="0 of 24 p5.48xlarge used"' in body  # program-wide
    body = client.get(reverse("workloads:quota_list"), {"organization": world.org_b.pk}).content.decode()
    assert 'aria-label="0 of 8 p5.48xlarge used"' in body and "cr-000000000000000a1" not in body


def test_csv_neutralizes_formulas(client, world):
    InstanceQuotaFactory(organization=world.org_a, notes="=2+3")
    client.force_login(world.customer_a)
    body = b"".join(client.get(reverse("workloads:quota_list"), {"export": "csv"}).streaming_content).decode()
    assert body.splitlines()[1].endswith(",'=2+3")


def test_organization_page_shows_workloads_and_quota_sections(client, world, quota):
    from tests.workloads.factories_workloads import WorkloadFactory

    WorkloadFactory(organization=world.org_a, name="Alpha 100B")
    WorkloadFactory(organization=world.org_b, name="Beta 8B")
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "Alpha 100B" in body and "Beta 8B" not in body and "0 / 16" in body
    assert "Record a workload" not in body
    client.force_login(world.lead_a)
    assert "Record a workload" in client.get(world.org_a.get_absolute_url()).content.decode()
