"""What every role meets on every page: one time zone and date format, grouped navigation, pending approvals."""
from __future__ import annotations

import datetime
import re

from django.urls import reverse
from django.utils import timezone

from tests.clusters.factories_clusters import ClusterFactory
from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory


def test_times_are_shown_in_the_display_time_zone(client, world, settings):
    assert settings.TIME_ZONE == "Asia/Tokyo"
    from portal.core.templatetags.portal_display import when

    utc = datetime.datetime(2026, 12, 1, 10, 52, 27, 458847, tzinfo=datetime.UTC)
    assert when(utc) == "2026-12-01 19:52" and when(utc.isoformat()) == "2026-12-01 19:52"
    assert when(utc, True) == "2026-12-01 19:52 JST" and when(None) == ""
    client.force_login(world.pm)
    body = client.get(reverse("review:overview")).content.decode()
    assert "Times in Asia/Tokyo (JST)" in body
    header = body.split("<hgroup>", 1)[1].split("</hgroup>", 1)[0]
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", header) and "UTC" not in header
    assert f"{timezone.localtime():%Y-%m-%d %H}" in header


def test_job_log_lines_use_the_display_time_zone(world):
    from clusters.models import LaunchJob

    cluster = ClusterFactory(organization=world.org_a, name="tz-check", node_count=1)
    job = LaunchJob(cluster=cluster)
    job.add_log("stack created")
    assert job.log.startswith(f"{timezone.localtime():%Y-%m-%d %H}")


def test_program_manager_navigation_is_grouped_with_pending_requests(client, world):
    QuotaChangeRequestFactory(quota=InstanceQuotaFactory(organization=world.org_a), requested_count=40,
                              justification="scale-up", requested_by=world.lead_a)
    client.force_login(world.pm)
    body = client.get(reverse("review:overview")).content.decode()
    nav = body.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    assert _top_level_links(nav) == ["Overview", "Organizations", "Work", "Capacity 1", "Clusters", "Program",
                                     "Weekly reviews", "pm"]
    assert reverse("workloads:changerequest_list") in nav and "(1 pending)" in nav
    assert "1</strong> quota request waiting for your decision" in body
    client.force_login(world.customer_a)
    nav = client.get(reverse("workloads:quota_list")).content.decode().split('<nav aria-label="Main">', 1)[1]
    assert "pending" not in nav.split("</nav>", 1)[0]


def _top_level_links(nav_html: str) -> list[str]:
    """The labels of the navigation's top-level entries (links or dropdown summaries) in ul.nav-links."""
    from html.parser import HTMLParser

    class Parser(HTMLParser):
        def __init__(self):
            super().__init__()
            self.depth, self.in_links, self.labels, self.capture = 0, False, [], False

        def handle_starttag(self, tag, attrs):
            if tag == "ul" and ("class", "nav-links") in attrs:
                self.in_links, self.depth = True, 0
            elif self.in_links and tag == "li":
                self.depth += 1
                if self.depth == 1:
                    self.labels.append("")
                    self.capture = True
            elif self.in_links and tag == "ul" and self.depth == 1:
                self.capture = False

        def handle_endtag(self, tag):
            if self.in_links and tag == "li":
                self.depth -= 1
                self.capture = False

        def handle_data(self, data):
            if self.capture and self.depth == 1:
                self.labels[-1] = " ".join(f"{self.labels[-1]} {data}".split())

    parser = Parser()
    parser.feed(nav_html)
    return parser.labels


def test_interactions_filter_bar_is_grouped_with_from_and_to_dates(client, world):
    from tests.interactions.factories_interactions import InteractionFactory

    day = timezone.localtime().replace(hour=23, minute=30)
    late = InteractionFactory(organization=world.org_a, summary="late in the day", occurred_at=day)
    InteractionFactory(organization=world.org_a, summary="a week before", occurred_at=day - datetime.timedelta(days=7))
    client.force_login(world.lead_a)
    url = reverse("interactions:interaction_list")
    body = client.get(url).content.decode()
    assert ">From<" in body and ">To<" in body and 'type="date"' in body and "More filters" in body
    assert "greater than or equal" not in body and "Challenge tag" not in body
    row = body.split('class="filter-row"', 1)[1].split("</div>", 1)[0]
    assert row.count("<label") == 4  # search, organization, status, open only; the rest behind "More filters"
    owners = body.split('name="owner"', 1)[1].split("</select>", 1)[0]
    assert str(world.lead_a.pk) in owners and f'value="{world.lead_b.pk}"' not in owners
    today = f"{day:%Y-%m-%d}"
    listed = client.get(url, {"from_date": today, "to_date": today}).content.decode()
    assert late.summary in listed and "a week before" not in listed  # "To" includes its whole day
    assert client.get(url, {"to_date": "not-a-date"}).status_code == 200
    assert '<option value="unknown" selected>Any</option>' in body and 'role="search"' not in body
    resolved = InteractionFactory(organization=world.org_a, summary="done and dusted", status="resolved")
    open_only = client.get(url, {"open": "true"}).content.decode()
    assert late.summary in open_only and resolved.summary not in open_only
    assert '<option value="true" selected>Open</option>' in open_only


def test_human_labels_for_codes_and_people():
    from portal.core.templatetags.portal_display import code_label, lower_first

    assert code_label("waiting_customer") == "Waiting on customer"
    assert code_label("reset_gpu") != "reset_gpu" and "_" not in code_label("some_new_code")
    assert lower_first("Status and lead SA") == "status and lead SA" and lower_first("NCCL runs") == "NCCL runs"


def test_code_labels_follow_the_language_of_each_call():
    """The labels are translated once per language and kept: a Japanese call after an English one (and back)
    still reads its own language, and a choice module added later is known at once."""
    import types

    from django.db import models
    from django.utils import translation

    from portal.core.templatetags import portal_display
    from portal.core.templatetags.portal_display import code_label

    english = code_label("waiting_customer")
    with translation.override("ja"):
        japanese = code_label("waiting_customer")
    assert english == "Waiting on customer" and japanese not in ("", english, "waiting customer")
    assert code_label("waiting_customer") == english
    with translation.override("ja"):
        assert code_label("waiting_customer") == japanese

    class Later(models.TextChoices):
        BRAND_NEW = "brand_new_code_for_labels", "A label added later"

    module = types.ModuleType("later_choices")
    module.Later = Later
    assert code_label("brand_new_code_for_labels") == "brand new code for labels"
    try:
        portal_display.add_label_source(module)
        assert code_label("brand_new_code_for_labels") == "A label added later"
    finally:
        portal_display.LABEL_SOURCES.remove(module)
        portal_display._LABELS = None
        portal_display._TRANSLATED.clear()


def test_filter_bars_say_what_an_empty_choice_means(client, world):
    """A choice with nothing picked reads "Any" (or "Default order", "Active cycle"), never "---------", and
    the quota filters are labelled in words, not field lookups."""
    client.force_login(world.pm)
    for name in ("workloads:quota_list", "workloads:workload_list", "interactions:interaction_list",
                 "clusters:cluster_list", "enablement:enablement_list", "workloads:changerequest_list"):
        body = client.get(reverse(name)).content.decode()
        assert "---------" not in body, name
        assert ">Any</option>" in body or "Active cycle" in body, name
    quotas = client.get(reverse("workloads:quota_list")).content.decode()
    assert "Ends by" in quotas and "Default order" in quotas and "Instance type name" not in quotas
    assert "is less than or equal to" not in quotas
