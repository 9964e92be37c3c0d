"""The organization timeline page: filters, keyset pagination as you scroll, visibility, query count."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core import timeline
from portal.core.models import TimelineEntry
from portal.core.timeline_views import PAGE_SIZE, decode_cursor, encode_cursor
from tests.queries import assert_flat_queries


def _url(world, **params):
    from urllib.parse import urlencode

    return reverse("portal:timeline", args=[world.org_a.slug]) + ("?" + urlencode(params) if params else "")


def _bulk(org, count, *, start=None, visibility="shared", kind="note", tags=None):
    start = start or timezone.now()
    TimelineEntry.objects.bulk_create(
        TimelineEntry(organization=org, occurred_at=start - timedelta(minutes=i), kind=kind,
                      title=f"entry {i:05d}", visibility=visibility, tags=tags or [])
        for i in range(count)
    )


def test_customer_sees_only_shared_entries_of_their_organization(client, world):
    timeline.record(world.org_a, "interaction", "SHARED-A")
    timeline.record(world.org_a, "interaction", "INTERNAL-A", visibility="internal")
    timeline.record(world.org_b, "interaction", "SHARED-B")
    client.force_login(world.customer_a)
    page = client.get(_url(world)).content.decode()
    assert "SHARED-A" in page and "INTERNAL-A" not in page and "SHARED-B" not in page
    partial = client.get(_url(world), headers={"HX-Request": "true"}).content.decode()
    assert "SHARED-A" in partial and "INTERNAL-A" not in partial and "<html" not in partial
    client.force_login(world.lead_a)
    assert "INTERNAL-A" in client.get(_url(world)).content.decode()
    client.force_login(world.customer_b)
    assert client.get(_url(world)).status_code == 404


def test_scrolling_walks_every_entry_once_in_order(client, world):
    now = timezone.now()
    _bulk(world.org_a, PAGE_SIZE * 2 + 7, start=now)
    # Entries sharing one timestamp must not be skipped or repeated at a page boundary.
    TimelineEntry.objects.bulk_create(
        TimelineEntry(organization=world.org_a, occurred_at=now - timedelta(minutes=30), kind="note", title=f"tie {i}")
        for i in range(5)
    )
    client.force_login(world.lead_a)
    seen, url = [], _url(world)
    for _ in range(10):
        response = client.get(url, headers={"HX-Request": "true"})
        seen += [e.pk for e in response.context["entries"]]
        if not response.context["next_cursor"]:
            break
        assert 'hx-trigger="revealed"' in response.content.decode()
        url = _url(world, cursor=response.context["next_cursor"])
    expected = list(TimelineEntry.objects.filter(organization=world.org_a).order_by("-occurred_at", "-id")
                    .values_list("pk", flat=True))
    assert seen == expected and len(seen) == PAGE_SIZE * 2 + 12


def test_filters_by_kind_tag_and_date(client, world):
    now = timezone.now()
    timeline.record(world.org_a, "interaction", "nccl case", tags=["nccl-configuration"], occurred_at=now)
    timeline.record(world.org_a, "launch", "cluster launched", occurred_at=now - timedelta(days=3))
    timeline.record(world.org_a, "interaction", "old case", tags=["slurm"], occurred_at=now - timedelta(days=40))
    client.force_login(world.lead_a)

    def titles(**params):
        return [e.title for e in client.get(_url(world, **params)).context["entries"]]

    assert titles(kind="launch") == ["cluster launched"]
    assert titles(tag="nccl-configuration") == ["nccl case"]
    assert titles(tag="nccl") == []  # whole tags only
    since = (timezone.localdate() - timedelta(days=10)).isoformat()
    assert titles(since=since) == ["nccl case", "cluster launched"]
    until = (timezone.localdate() - timedelta(days=30)).isoformat()
    assert titles(until=until) == ["old case"]
    response = client.get(_url(world, since="2026-02-01", until="2026-01-01"))
    assert "must not be after" in response.content.decode()


def test_a_tampered_cursor_starts_from_the_top(client, world):
    _bulk(world.org_a, 3)
    client.force_login(world.lead_a)
    response = client.get(_url(world, cursor="not-a-cursor!!"))
    assert response.status_code == 200 and len(response.context["entries"]) == 3
    entry = TimelineEntry.objects.first()
    assert decode_cursor(encode_cursor(entry)) == (entry.occurred_at, entry.pk)


@pytest.mark.parametrize("user", ["customer_a", "lead_a", "pm"])
def test_query_count_is_constant_in_the_number_of_entries(client, world, user):
    client.force_login(getattr(world, user))
    grow = lambda n: _bulk(world.org_a, n, tags=["slurm"])  # noqa: E731
    assert_flat_queries(client, _url(world), grow=grow, sizes=(10, 410), at_most=6)
    assert_flat_queries(client, _url(world, tag="slurm", kind="note"), grow=grow, sizes=(10, 410), at_most=6,
                        headers={"HX-Request": "true"})
