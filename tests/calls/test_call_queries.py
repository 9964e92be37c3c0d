"""The call area's list pages and the program manager's board answer in a number of queries that does not grow
with the rows they list."""
from __future__ import annotations

import datetime
import itertools

import pytest
from django.test import Client
from django.urls import reverse

from portal.engagement.calls.models import Application, Call, ReviewAssignment
from tests.factories import OrganizationFactory, UserFactory
from tests.queries import assert_flat_queries

_numbers = itertools.count(1)


def _grow_calls(n: int) -> None:
    for _ in range(n):
        i = next(_numbers)
        Call.objects.create(title=f"Call {i}", opens_on=datetime.date(2026, 1, 1), closes_on=datetime.date(2026, 2, 1),
                            next_cycle_starts_on=datetime.date(2026, 4, 1), status="open")


def _grower(call: Call, reviewer):
    def grow(n: int) -> None:
        for _ in range(n):
            org = OrganizationFactory(name=f"Org {next(_numbers)}")
            application = Application.objects.create(call=call, organization=org, status="submitted",
                                                     requested=[{"instance_type": "p5.48xlarge",
                                                                 "region": "ap-northeast-1", "count": 2, "weeks": 2}])
            ReviewAssignment.objects.create(application=application, reviewer=reviewer, scores={"Impact": 3})
    return grow


@pytest.fixture
def pm_client(world) -> Client:
    client = Client()
    client.force_login(world.pm)
    return client


def test_the_call_list_is_flat(world, pm_client):
    assert_flat_queries(pm_client, reverse("calls:call_list"), grow=_grow_calls)


@pytest.mark.parametrize("route", ["calls:application_list", "calls:review_list"])
def test_the_application_and_review_lists_are_flat(world, pm_client, route):
    call = Call.objects.create(title="Call", opens_on=datetime.date(2026, 1, 1), closes_on=datetime.date(2026, 2, 1),
                               next_cycle_starts_on=datetime.date(2026, 4, 1), status="open",
                               criteria=[{"name": "Impact", "weight": 1}])
    assert_flat_queries(pm_client, reverse(route), grow=_grower(call, UserFactory(username="r")))


def test_the_board_is_flat(world, pm_client):
    call = Call.objects.create(title="Call", opens_on=datetime.date(2026, 1, 1), closes_on=datetime.date(2026, 2, 1),
                               next_cycle_starts_on=datetime.date(2026, 4, 1), status="open",
                               criteria=[{"name": "Impact", "weight": 1}])
    small, large = assert_flat_queries(pm_client, reverse("calls:call_board", kwargs={"pk": call.pk}),
                                       grow=_grower(call, UserFactory(username="r")))
    assert small == large


def test_a_reviewers_list_is_flat_and_holds_only_their_assignments(world):
    call = Call.objects.create(title="Call", opens_on=datetime.date(2026, 1, 1), closes_on=datetime.date(2026, 2, 1),
                               next_cycle_starts_on=datetime.date(2026, 4, 1), status="open")
    reviewer = UserFactory(username="rev")
    client = Client()
    client.force_login(reviewer)
    assert_flat_queries(client, reverse("calls:application_list"), grow=_grower(call, reviewer))
    assert Application.objects.restrict(reviewer).count() == Application.objects.count() == 30
