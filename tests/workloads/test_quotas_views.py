"""Quotas, reservations and change requests through the generic page and API cases (tests/viewtests.py)."""
import datetime
import itertools

from django.urls import reverse
from django.utils import timezone

from tests import viewtests
from tests.workloads.factories_workloads import (
    CapacityReservationFactory,
    InstanceQuotaFactory,
    QuotaChangeRequestFactory,
)
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest

_notes = itertools.count()


def _day(days: int = 0) -> str:
    return (timezone.localdate() + datetime.timedelta(days=days)).isoformat()


class QuotaCase(viewtests.ModelCase):
    model = InstanceQuota
    factory = InstanceQuotaFactory
    writer = "pm"
    read_only = ("customer_a", "lead_a")
    foreign_create_status = 403
    api_basename = "workloads-api:instancequota"
    api_methods = ("post", "patch")
    url_names = {"list": "workloads:quota_list", "add": "workloads:quota_add", "edit": "workloads:quota_edit"}

    def make(self, world, **fields):
        return self.factory(organization=world.org_a, notes=f"quota note {next(_notes)}", **fields)

    def make_foreign(self, world, **fields):
        return self.factory(organization=world.org_b, notes=f"quota note {next(_notes)}", **fields)

    def grow(self, world, n):
        """Quotas, and reservations ending within the list's two weeks (listed as expiring)."""
        super().grow(world, n)
        for i in range(n):
            CapacityReservationFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=3))

    def visible_marker(self, obj):
        return obj.notes

    def form_data(self, world):
        return {"organization": world.org_a.pk, "instance_type_name": "p5.48xlarge", "region": "us-east-1",
                "count": 8, "start": _day(-1), "end": _day(90), "notes": ""}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "count": 0}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "region": obj.region, "start": obj.start, "end": obj.end, "count": 20}

    def edited(self, obj):
        return obj.count == 20

    def api_data(self, world):
        return {"organization": world.org_a.slug, "instance_type": "p5.48xlarge", "region": "us-east-1", "count": 2,
                "start": _day(-1), "end": _day(90)}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "count": 0}

    def api_patch(self, world, obj):
        return {"count": 20}

    def api_patched(self, obj):
        return obj.count == 20


class TestQuotaPages(QuotaCase, viewtests.ListTests, viewtests.CsvTests, viewtests.CreateTests, viewtests.EditTests):
    list_roles = ("pm", "customer_a", "lead_a")
    foreign_create_status = 403  # neither of B's roles changes quotas anywhere


class TestQuotaApi(QuotaCase, viewtests.ApiTests):
    flat_roles = ("pm", "customer_a")


class ReservationCase(viewtests.ModelCase):
    model = CapacityReservation
    factory = CapacityReservationFactory
    writer = "pm"
    read_only = ("customer_a", "lead_a")
    foreign_create_status = 403
    api_basename = "workloads-api:capacityreservation"
    api_methods = ("post", "patch")
    url_names = {"list": "workloads:reservation_list", "add": "workloads:reservation_add",
                 "edit": "workloads:reservation_edit"}

    def visible_marker(self, obj) -> str:
        return obj.reservation_id

    def form_data(self, world):
        return {"organization": world.org_a.pk, "reservation_id": "cr-0000000000000abcd", "kind": "odcr",
                "instance_type_name": "p5.48xlarge", "count": 4, "region": "ap-northeast-1",
                "availability_zone": "ap-northeast-1a", "start": _day(), "end": _day(10)}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "reservation_id": "r-1"}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "reservation_id": obj.reservation_id, "count": 6}

    def edited(self, obj):
        return obj.count == 6

    def api_data(self, world):
        return {"organization": world.org_a.slug, "reservation_id": "cr-0000000000000abcd", "kind": "capacity_block",
                "instance_type": "p5.48xlarge", "count": 4, "region": "ap-northeast-1",
                "availability_zone": "ap-northeast-1a", "start": _day(), "end": _day(10)}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "availability_zone": "us-east-1a"}

    def api_patch(self, world, obj):
        return {"count": 6}

    def api_patched(self, obj):
        return obj.count == 6


class TestReservationPages(ReservationCase, viewtests.ListTests, viewtests.CsvTests, viewtests.CreateTests,
                           viewtests.EditTests):
    flat_roles = ("pm", "customer_a")


class TestReservationApi(ReservationCase, viewtests.ApiTests):
    flat_roles = ("pm", "customer_a")


class ChangeRequestCase(viewtests.ModelCase):
    model = QuotaChangeRequest
    factory = QuotaChangeRequestFactory
    writer = "lead_a"
    read_only = ("customer_a", "pm")  # program managers decide (approve) but do not ask
    foreign_create_status = {"customer_b": 403, "lead_b": 200}  # B's lead SA: organization A is no choice
    api_basename = "workloads-api:quotachangerequest"
    api_methods = ("post", "patch")
    url_names = {"list": "workloads:changerequest_list", "detail": "workloads:changerequest_detail",
                 "add": "workloads:changerequest_add", "edit": "workloads:changerequest_edit"}

    def make(self, world, **fields):
        return self.factory(quota=InstanceQuotaFactory(organization=world.org_a), **fields)

    def make_foreign(self, world, **fields):
        return self.factory(quota=InstanceQuotaFactory(organization=world.org_b), **fields)

    def quota(self, world):
        return InstanceQuota.objects.filter(organization=world.org_a).first() or InstanceQuotaFactory(
            organization=world.org_a)

    def form_data(self, world):
        return {"organization": world.org_a.pk, "quota": self.quota(world).pk, "requested_count": 24,
                "justification": "Final 400B tokens."}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "requested_count": 0}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "quota": obj.quota_id, "requested_count": 32}

    def edited(self, obj):
        return obj.requested_count == 32

    def api_data(self, world):
        return {"organization": world.org_a.slug, "quota": self.quota(world).pk, "requested_count": 24,
                "justification": "Final run."}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "requested_count": 0}

    def api_patch(self, world, obj):
        return {"requested_count": 32}

    def api_patched(self, obj):
        return obj.requested_count == 32


class TestChangeRequestPages(ChangeRequestCase, viewtests.ListTests, viewtests.CsvTests, viewtests.DetailTests,
                             viewtests.CreateTests, viewtests.EditTests):
    pass


class TestChangeRequestApi(ChangeRequestCase, viewtests.ApiTests):
    flat_roles = ("pm", "customer_a")



def test_reservation_list_states_each_reservations_dates_and_filters(client, world):
    today = timezone.localdate()
    quota = InstanceQuotaFactory(organization=world.org_a, count=64)
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0000000000000aaa1", quota=quota,
                               start=today - datetime.timedelta(days=3), end=today + datetime.timedelta(days=5))
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0000000000000aaa2", kind="capacity_block",
                               start=today + datetime.timedelta(days=2), end=today + datetime.timedelta(days=16))
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0000000000000aaa3",
                               start=today - datetime.timedelta(days=30), end=today - datetime.timedelta(days=1))
    client.force_login(world.customer_a)
    page = client.get(reverse("workloads:reservation_list")).content.decode()
    rows = {line.split("<code>")[1][:20]: line for line in page.split("<tr>") if "<code>cr-" in line}
    assert "(5 days left)" in rows["cr-0000000000000aaa1"] and "64 × p5.48xlarge" in rows["cr-0000000000000aaa1"]
    assert "not started" in rows["cr-0000000000000aaa2"] and "ended" in rows["cr-0000000000000aaa3"]
    assert page.index("cr-0000000000000aaa3") < page.index("cr-0000000000000aaa1")  # soonest to end first
    assert "---------" not in page and "New reservation" not in page  # customers read, program managers write
    blocks = client.get(reverse("workloads:reservation_list"), {"kind": "capacity_block"}).content.decode()
    assert "cr-0000000000000aaa2" in blocks and "cr-0000000000000aaa1" not in blocks
    client.force_login(world.pm)
    assert "New reservation" in client.get(reverse("workloads:reservation_list")).content.decode()
