"""Per-organization thresholds: lead SAs edit them with the version they read; the idle notices use them."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.accounting import idle, thresholds
from clusters.accounting.models import AccountingSettings
from portal.core import versions
from tests.accounting.test_accounting_pages import idle_cluster

pytestmark = pytest.mark.django_db


def test_defaults_until_a_lead_sa_sets_them(world, settings):
    settings.ACCOUNTING_STALL_MINUTES = 20
    assert thresholds.for_organization(world.org_a.pk) == thresholds.Thresholds(
        thresholds.defaults().idle_busy_share, 24, 20)
    assert str(thresholds.defaults().idle_busy_share) == "0.1"


def test_lead_sa_sets_the_thresholds_with_a_version_check(world, client):
    url = reverse("accounting:settings", args=[world.org_a.slug])
    client.force_login(world.lead_a)
    page = client.get(url)
    assert page.status_code == 200
    token = page.context["form"].fields[versions.FIELD].initial
    data = {"idle_busy_percent": 25, "idle_hours": 6, "stall_minutes": 30, versions.FIELD: token}
    assert client.post(url, data).status_code == 302
    row = AccountingSettings.objects.get(organization=world.org_a)
    assert (row.idle_busy_percent, row.idle_hours, row.stall_minutes) == (25, 6, 30)
    # A second save from the page read before the first one is refused and shows what changed.
    refused = client.post(url, {**data, "idle_hours": 48})
    assert refused.status_code == 409
    assert [c.name for c in refused.context["version_conflict"]] == ["idle_busy_percent", "idle_hours",
                                                                    "stall_minutes"]
    row.refresh_from_db()
    assert row.idle_hours == 6


@pytest.mark.parametrize("field,value", [("idle_busy_percent", 0), ("idle_busy_percent", 101), ("idle_hours", 0),
                                         ("stall_minutes", 2)])
def test_out_of_range_values_are_refused_and_nothing_is_written(world, client, field, value):
    client.force_login(world.lead_a)
    data = {"idle_busy_percent": 10, "idle_hours": 24, "stall_minutes": 15, field: value}
    response = client.post(reverse("accounting:settings", args=[world.org_a.slug]), data)
    assert response.status_code == 400 and response.context["form"].errors[field]
    assert not AccountingSettings.objects.filter(**{field: value}).exists()


def test_the_idle_notices_use_each_organizations_thresholds(world):
    # 8 h at 15 % busy: idle for A (under 20 % for 6 h), not for B (defaults: under 10 % for 24 h).
    AccountingSettings.objects.create(organization=world.org_a, idle_busy_percent=20, idle_hours=6)
    a = idle_cluster(world.org_a, 8, busy_share="0.15")
    idle_cluster(world.org_b, 8, busy_share="0.15")
    assert [n.cluster_id for n in idle.check()] == [a.pk]
