"""Awards become the next cycle's reservation requests: one per awarded line, holding the instance type, region,
instances, weeks and the Capacity Block or training plan offering AWS answered (the embedded endpoint); the cycle
start carries them in; the program manager fulfils one (a capacity reservation the accounting counts) or declines
it; the same award saved twice makes no second request; an organization sees only its own."""
from __future__ import annotations

import datetime

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from clusters.accounting import requests as reservation_requests
from clusters.accounting import services as accounting
from clusters.accounting.models import ReservationRequest
from portal.core.models import CycleCarry
from portal.engagement import cycles
from portal.engagement.calls import services
from sandbox.aws import moto_offerings
from tests.calls.conftest import line
from workloads.models import CapacityReservation, InstanceQuota

ACCOUNT = "123456789012"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _award(world, program):
    a = program.apply(world.org_a, world.customer_a, [line(8), line(8, instance_type="trn1.32xlarge")])
    moto_offerings.set_supply(ACCOUNT, "ap-northeast-1", "trn1.32xlarge", 0, service="ec2")  # HyperPod only
    done = services.award(program.call, {a.pk: [line(8), line(4, instance_type="trn1.32xlarge")]}, world.pm)
    return a, done


def test_an_award_makes_one_request_per_line_with_the_offering_checked_at_award_time(world, program, aws):
    a, done = _award(world, program)
    assert done["reservation_requests"] == 2
    rows = list(ReservationRequest.objects.order_by("instance_type_name"))
    assert [(r.organization_id, r.instance_type_name, r.region, r.count, r.weeks, r.start, r.end, r.offering_kind,
             r.state, r.cycle_id) for r in rows] == [
        (world.org_a.pk, "p5.48xlarge", "ap-northeast-1", 8, 4, datetime.date(2027, 1, 4), datetime.date(2027, 1, 31),
         "capacity_block", "pending", program.cycle.pk),
        (world.org_a.pk, "trn1.32xlarge", "ap-northeast-1", 4, 4, datetime.date(2027, 1, 4),
         datetime.date(2027, 1, 31), "training_plan", "pending", program.cycle.pk)]
    a.refresh_from_db()
    assert [r.offering_id for r in rows] == [line_["offering_id"] for line_ in
                                             sorted(a.awarded, key=lambda x: x["instance_type"])]
    assert rows[0].offering_id.startswith("cb-") and rows[1].offering_id.startswith("tpo-")
    assert rows[0].upfront_fee  # the fee AWS quoted
    assert {r.quota.instance_type_name for r in rows} == {"p5.48xlarge", "trn1.32xlarge"}
    assert rows[0].history.count() == 1


def test_the_same_award_saved_again_makes_no_second_request(world, program, aws):
    a, _done = _award(world, program)
    with pytest.raises(services.CallError):
        services.award(program.call, {a.pk: [line(8)]}, world.pm)
    page = _client(world.pm).post(reverse("calls:call_award", kwargs={"pk": program.call.pk}),
                                  {f"award_{a.pk}": "8 p5.48xlarge ap-northeast-1 4"})
    assert page.status_code in (302, 400)
    assert ReservationRequest.objects.count() == 2 and InstanceQuota.objects.count() == 2
    # The key is the database's rule too: the service skips a taken key, a raw insert is refused.
    first = ReservationRequest.objects.order_by("pk").first()
    assert reservation_requests.create_for_award(world.org_a, program.cycle, "again", [
        (first.award_key, {**line(8), "start": first.start}, None)]) == 0
    with transaction.atomic(), pytest.raises(IntegrityError):
        ReservationRequest.objects.create(organization=world.org_a, award_key=first.award_key,
                                          instance_type_name="p5.48xlarge", region="ap-northeast-1", count=1,
                                          weeks=1, start=first.start, end=first.start)
    assert ReservationRequest.objects.count() == 2


def test_the_next_cycle_holds_the_requests_and_a_fulfilled_one_is_counted_reserved(world, program, aws):
    _award(world, program)
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk, world.org_b.pk],
                            starts_on=datetime.date(2027, 1, 4), today=datetime.date(2027, 1, 4))
    rows = list(ReservationRequest.objects.order_by("instance_type_name"))
    assert {r.cycle_id for r in rows} == {nxt.pk}
    assert CycleCarry.objects.filter(cycle=nxt, kind="award_request").count() == 2
    assert rows[0].history.first().history_change_reason.startswith("Carried over")

    # The program manager sees it in the next cycle and records the Capacity Block bought.
    page = _client(world.pm).get(reverse("accounting:request_list"))
    assert page.status_code == 200 and "p5.48xlarge" in page.content.decode()
    response = _client(world.pm).post(reverse("accounting:request_fulfil", kwargs={"pk": rows[0].pk}),
                                      {"reservation_id": "cr-0a1b2c3d4e5f60718",
                                       "availability_zone": "ap-northeast-1a"})
    assert response.status_code == 302
    rows[0].refresh_from_db()
    reservation = rows[0].reservation
    assert rows[0].state == "fulfilled" and reservation.cycle_id == nxt.pk
    assert (reservation.kind, reservation.count, reservation.start, reservation.end, reservation.quota_id) == (
        "capacity_block", 8, datetime.date(2027, 1, 4), datetime.date(2027, 1, 31), rows[0].quota_id)
    # The accounting reads it as reserved capacity of the organization.
    spans = accounting.reserved_spans(CapacityReservation.objects.filter(organization=world.org_a).values(
        "count", "instance_type_name", "start", "end"))
    assert spans and spans[0][2] == 8 * 8  # eight instances of eight GPUs

    # Decided once: a second answer is refused, nothing changes.
    again = _api(world.pm).post(reverse("accounting-api:reservationrequest-decline", kwargs={"pk": rows[0].pk}),
                                {"note": "changed our mind"}, format="json")
    assert again.status_code == 409
    declined = _api(world.pm).post(reverse("accounting-api:reservationrequest-decline", kwargs={"pk": rows[1].pk}),
                                   {"note": "HyperPod plan not needed"}, format="json")
    assert declined.status_code == 200 and declined.json()["state"] == "declined"
    assert CapacityReservation.objects.count() == 1


def test_an_organization_sees_only_its_own_requests_and_cannot_act_on_them(world, program, aws):
    _award(world, program)
    request = ReservationRequest.objects.first()
    url = reverse("accounting:request_detail", kwargs={"pk": request.pk})
    assert _client(world.customer_a).get(url).status_code == 200
    assert _client(world.customer_b).get(url).status_code == 404
    assert _api(world.lead_b).get(reverse("accounting-api:reservationrequest-list")).json()["count"] == 0
    assert _api(world.lead_a).get(reverse("accounting-api:reservationrequest-list")).json()["count"] == 2
    refused = _client(world.lead_a).post(reverse("accounting:request_decline", kwargs={"pk": request.pk}),
                                         {"note": "no"})
    assert refused.status_code == 403
    request.refresh_from_db()
    assert request.state == "pending"


def test_the_request_list_needs_as_many_queries_for_many_requests_as_for_few(world):
    from itertools import count

    from tests.queries import assert_flat_queries

    numbers = count()

    def grow(n: int) -> None:
        for _ in range(n):
            i = next(numbers)
            ReservationRequest.objects.create(
                organization=world.org_a if i % 2 else world.org_b, award_key=f"calls.application:{i}:0",
                instance_type_name="p5.48xlarge", region="ap-northeast-1", count=2, weeks=1,
                start=datetime.date(2027, 1, 4), end=datetime.date(2027, 1, 10), offering_kind="capacity_block")

    assert_flat_queries(_client(world.pm), reverse("accounting:request_list"), grow=grow)
    assert_flat_queries(_api(world.pm), reverse("accounting-api:reservationrequest-list"), grow=grow)
