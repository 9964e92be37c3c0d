"""Dates and codes as the pages show them: "Last contact" is the day in the display time zone (page, CSV and
PDF), interaction statuses and severities by their labels in the weekly review's PDF, and the quota-request
filter names each quota's organization."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.review import services
from tests.portal.test_pdf_markup import _strings
from tests.workloads.factories_workloads import InstanceQuotaFactory
from workloads.interactions.models import Interaction

pytestmark = pytest.mark.django_db


def _half_past_midnight() -> datetime.datetime:
    """The latest 00:30 in the display time zone (Asia/Tokyo: 15:30 UTC the day before)."""
    now = timezone.localtime()
    moment = now.replace(hour=0, minute=30, second=0, microsecond=0)
    return moment if moment <= now else moment - datetime.timedelta(days=1)


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def test_last_contact_is_the_local_day(client, world):
    moment = _half_past_midnight()
    local_day, utc_day = moment.date().isoformat(), moment.astimezone(datetime.UTC).date().isoformat()
    assert local_day != utc_day  # 00:30 JST is the previous day in UTC
    Interaction.objects.create(organization=world.org_b, summary="late call", occurred_at=moment, status="open",
                               severity="normal", visibility="internal")
    client.force_login(world.pm)
    page = client.get(reverse("review:overview")).content.decode()
    row = page.split(f'href="{world.org_b.get_absolute_url()}"', 1)[1].split("</tr>", 1)[0]
    assert f"<td>{local_day}</td>" in row and utc_day not in row
    csv = _body(client.get(reverse("review:overview_csv", args=["organizations"])))
    beta = next(line for line in csv.splitlines() if line.startswith("Beta Works"))
    assert local_day in beta and utc_day not in beta
    review = services.freeze(world.pm)
    text = _strings(client.get(reverse("review:review_pdf", kwargs={"pk": review.pk})).content)
    # The organization's row (the rest of the PDF names other days: the week's Monday, a chart's days).
    row = text[text.index("Beta Works"):text.index("Program totals by instance type")]
    assert local_day in row and utc_day not in row


def test_the_weekly_review_pdf_shows_labels_not_codes(client, world):
    for status in ("waiting_customer", "waiting_aws"):
        Interaction.objects.create(organization=world.org_b, summary=f"asked {len(status)}", status=status, severity="critical",
                                   occurred_at=timezone.now() - datetime.timedelta(hours=3), visibility="internal")
    from tests.clusters.factories_clusters import ClusterFactory

    ClusterFactory(organization=world.org_b, name="b-ready", state="ready")
    review = services.freeze(world.pm)
    client.force_login(world.pm)
    text = " ".join(_strings(client.get(reverse("review:review_pdf", kwargs={"pk": review.pk})).content).split())
    # Severity then status, as the outstanding table prints them.
    assert "Critical Waiting on customer" in text and "Critical Waiting on AWS" in text
    assert "Ready 1" in text
    for code in ("waiting_customer", "waiting_aws", "critical Waiting", "ready 1"):
        assert code not in text, code


def test_quota_request_filter_names_each_quotas_organization(client, world):
    ours = InstanceQuotaFactory(organization=world.org_a, instance_type_name="p5.48xlarge", count=8,
                                region="ap-northeast-1")
    theirs = InstanceQuotaFactory(organization=world.org_b, instance_type_name="p5.48xlarge", count=8,
                                  region="ap-northeast-1")
    client.force_login(world.pm)
    page = client.get(reverse("workloads:changerequest_list")).content.decode()
    select = page.split('name="quota"', 1)[1].split("</select>", 1)[0]
    assert f'<option value="{ours.pk}">{world.org_a.name} · 8 × p5.48xlarge in ap-northeast-1' in select
    assert f'<option value="{theirs.pk}">Beta Works · 8 × p5.48xlarge in ap-northeast-1' in select
    client.force_login(world.lead_b)  # still only what the user sees
    select = client.get(reverse("workloads:changerequest_list")).content.decode().split('name="quota"', 1)[1]
    assert f'value="{theirs.pk}"' in select.split("</select>", 1)[0] and f'value="{ours.pk}"' not in select
