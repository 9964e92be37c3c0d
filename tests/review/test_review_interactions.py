"""Figures from support interactions: heat map, outstanding inquiries, lessons, the customer's shared-only view.

They run once the interactions models are installed (workloads.Interaction)."""
from __future__ import annotations

import datetime

from django.urls import reverse
from django.utils import timezone

from portal.review import figures
from tests.conftest import MARKER_A
from tests.queries import assert_flat_queries
from tests.review.factories_review import grow_program
from workloads.interactions.models import Interaction


def _tag(slug):
    Tag = Interaction.tags.field.related_model
    return Tag.objects.get_or_create(slug=slug, defaults={"name": slug.replace("-", " ").title()})[0]


def _interaction(org, days_ago, *, tags=(), status="open", severity="normal", visibility="internal", **kw):
    now = timezone.now()
    item = Interaction.objects.create(
        organization=org, summary=kw.pop("summary", f"q{days_ago}"), occurred_at=now - datetime.timedelta(days=days_ago),
        status=status, severity=severity, visibility=visibility,
        resolved_at=None if status != "resolved" else now - datetime.timedelta(hours=1), **kw)
    item.tags.set([_tag(t) for t in tags])
    return item


def test_heat_map_counts_are_exact(world):
    a, b = world.org_a, world.org_b
    # Window 28 days: now-28d .. now; previous window: now-56d .. now-28d.
    for days in (1, 3, 10):
        _interaction(a, days, tags=["nccl-config"])
    _interaction(a, 40, tags=["nccl-config"])
    _interaction(b, 2, tags=["nccl-config", "efa-networking"])
    _interaction(b, 30, tags=["efa-networking"])
    _interaction(b, 35, tags=["efa-networking"])
    _interaction(b, 70, tags=["fsx-throughput"])  # outside both windows
    _interaction(a, 5)  # untagged
    hm = figures.overview(world.pm, window=28)["heatmap"]
    rows = {r["tag"]: r for r in hm["rows"]}
    assert set(rows) == {"nccl-config", "efa-networking"}
    assert [o["slug"] for o in hm["organizations"]] == ["alpha-labs", "beta-works"]
    nccl = {c["organization"]: (c["count"], c["previous"], c["delta"]) for c in rows["nccl-config"]["cells"]}
    assert nccl == {"alpha-labs": (3, 1, 2), "beta-works": (1, 0, 1)}
    assert (rows["nccl-config"]["total"], rows["nccl-config"]["previous"], rows["nccl-config"]["organizations"]) == (4, 1, 2)
    efa = {c["organization"]: (c["count"], c["previous"]) for c in rows["efa-networking"]["cells"]}
    assert efa == {"alpha-labs": (0, 0), "beta-works": (1, 2)}
    assert rows["efa-networking"]["delta"] == -1
    assert hm["tags"] == ["nccl-config", "efa-networking"]  # most frequent first
    assert rows["nccl-config"]["cells"][0]["level"] == 4
    seven = {r["tag"]: r["total"] for r in figures.overview(world.pm, window=7)["heatmap"]["rows"]}
    assert seven == {"nccl-config": 3, "efa-networking": 1}


def test_heat_map_page_renders_classes(world, client):
    _interaction(world.org_a, 1, tags=["nccl-config"])
    client.force_login(world.pm)
    body = client.get(reverse("review:overview"), {"window": "14"}).content.decode()
    assert "Common challenges, last 14 days" in body and 'class="heat heat-4"' in body


def test_organization_row_and_week_figures(world):
    _interaction(world.org_a, 3, severity="critical", owner=world.lead_a)
    _interaction(world.org_a, 20, severity="high")
    _interaction(world.org_a, 1, status="resolved", lesson="Set FI_PROVIDER=efa")
    data = figures.overview(world.pm)
    row = next(o for o in data["organizations"] if o["slug"] == "alpha-labs")
    assert row["open"] == {"critical": 1, "high": 1, "normal": 0, "low": 0}
    assert row["open_total"] == 2 and row["oldest_open_days"] == 20
    assert data["week"]["open"] == 2 and data["week"]["resolved"] == 1
    assert [r["age_days"] for r in data["outstanding"]] == [20, 3]
    assert data["outstanding"][1]["owner"] == "lead_a"
    assert [r["lesson"] for r in data["lessons"]] == ["Set FI_PROVIDER=efa"]
    assert data["charts"]["open_per_week"][-1]["open"] == 2


def test_overview_query_count_with_interactions(world, client):
    client.force_login(world.pm)
    assert_flat_queries(client, reverse("review:overview"), grow=grow_program(interactions=6), sizes=(12, 120))


def test_customer_sees_only_shared_interactions_of_their_organization(world, client):
    _interaction(world.org_a, 2, summary="shared question", visibility="shared")
    _interaction(world.org_a, 6, summary="internal escalation note", visibility="internal", severity="critical")
    _interaction(world.org_b, 9, summary="beta question", visibility="shared", severity="high")
    from django.test import RequestFactory

    from portal.review.sections import status_section

    request = RequestFactory().get("/")
    request.user = world.customer_a
    assert status_section(request, world.org_a)["open_interactions"]["n"] == 1
    assert status_section(request, world.org_a)["open_interactions"]["urgent"] == 0
    request.user = world.lead_a
    assert status_section(request, world.org_a)["open_interactions"]["n"] == 2
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "<strong>1</strong> open" in body
    assert "internal escalation note" not in body and "beta question" not in body


def test_lead_home_lists_open_interactions_of_led_organizations(world, client):
    _interaction(world.org_a, 9, summary="alpha ageing question", severity="high")
    _interaction(world.org_b, 9, summary="beta private question")
    client.force_login(world.lead_a)
    body = client.get(reverse("portal:lead_home")).content.decode()
    section = body.split('id="lead-open-h"', 1)[1].split("</section>", 1)[0]
    assert "9 d" in section and "<td>1</td><td>1</td>" in section
    assert "beta private question" not in body
    client.force_login(world.lead_b)
    section_b = client.get(reverse("portal:lead_home")).content.decode().split('id="lead-open-h"', 1)[1]
    assert "Beta Works" in section_b.split("</section>", 1)[0] and MARKER_A not in section_b



def _scope(user):
    from portal.review.figures.organizations import organization_rows

    scope = figures.Scope(user=user, now=timezone.now())
    organization_rows(scope)
    return scope


def test_outstanding_is_the_oldest_open_first_and_bounded_while_counts_cover_all(world):
    """The outstanding list reads the first rows of the open interactions oldest first (ties by id, across
    organizations, in the order of the partial index on open rows); the counts come from the tallies."""
    from portal.review.figures.interactions import outstanding

    same = timezone.now() - datetime.timedelta(days=9)
    first = Interaction.objects.create(organization=world.org_b, summary="tie 1", occurred_at=same, status="open")
    second = Interaction.objects.create(organization=world.org_a, summary="tie 2", occurred_at=same,
                                        status="waiting_aws")
    _interaction(world.org_a, 30, status="resolved", summary="older but resolved")
    _interaction(world.org_a, 12, summary="oldest open")
    for days in (2, 4, 6):
        _interaction(world.org_b, days, status="waiting_customer")
    data = figures.overview(world.pm)
    assert [r["age_days"] for r in data["outstanding"]] == [12, 9, 9, 6, 4, 2]
    assert [r["summary"] for r in outstanding(_scope(world.pm), limit=3)] == ["oldest open", first.summary,
                                                                              second.summary]
    assert data["week"]["open"] == 6 and sum(o["open_total"] for o in data["organizations"]) == 6


def test_lessons_are_the_latest_edits_with_a_lesson_this_week_bounded(world):
    from portal.review.figures.interactions import lessons

    now = timezone.now()
    for minutes, lesson in ((1, "first"), (2, "second"), (3, "third"), (60 * 24 * 8, "last week"), (4, "")):
        item = _interaction(world.org_a, 1, status="resolved", lesson=lesson)
        Interaction.objects.filter(pk=item.pk).update(updated=now - datetime.timedelta(minutes=minutes))
    assert [r["lesson"] for r in lessons(_scope(world.pm), limit=2)] == ["first", "second"]
    assert [r["lesson"] for r in figures.overview(world.pm)["lessons"]] == ["first", "second", "third"]
