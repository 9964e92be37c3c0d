"""The overview's interaction pre-aggregates equal the figures counted from the interactions themselves,
after creates, edits, status changes, moves, deletes and concurrent writers."""
from __future__ import annotations

import datetime
import random
import threading
from collections import defaultdict

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from portal.core.choices import OPEN_STATUSES, SEVERITIES_WORST_FIRST
from portal.review import tallies
from portal.review.figures.interactions import heatmap, interaction_figures
from portal.review.figures.organizations import organization_rows
from portal.review.figures.scope import CHART_WEEKS, Scope
from portal.review.models import InteractionCount, InteractionWeek, TagMention
from tests.concurrency import race
from workloads.interactions import services
from workloads.interactions.models import ChallengeTag, Interaction


def _raw(user, now) -> dict:
    """The figures counted the plain way, from every interaction the user may view."""
    scope = Scope(user=user, now=now)
    rows = list(Interaction.objects.restrict(user).values("organization_id", "status", "severity", "occurred_at",
                                                          "resolved_at"))
    by_org: dict[int, dict] = {}
    for org_id in {r["organization_id"] for r in rows}:
        mine = [r for r in rows if r["organization_id"] == org_id]
        open_rows = [r for r in mine if r["status"] in OPEN_STATUSES]
        counts = {s: sum(1 for r in open_rows if r["severity"] == s) for s in SEVERITIES_WORST_FIRST}
        oldest = min((r["occurred_at"] for r in open_rows), default=None)
        by_org[org_id] = {"open": counts, "open_total": len(open_rows),
                          "oldest_open_days": max(0, (now - oldest).days) if oldest else None,
                          "last_contact": max(r["occurred_at"] for r in mine).isoformat()}

    def open_at(end):
        return sum(1 for r in rows if r["occurred_at"] < end and (
            (r["status"] in OPEN_STATUSES and r["resolved_at"] is None)
            or (r["resolved_at"] is not None and r["resolved_at"] >= end)))

    mondays = [scope.week_start - datetime.timedelta(weeks=CHART_WEEKS - 1 - i) for i in range(CHART_WEEKS)]
    ends = [timezone.make_aware(datetime.datetime.combine(m + datetime.timedelta(weeks=1), datetime.time.min))
            for m in mondays[:-1]] + [now]
    start = scope.week_start_at
    return {
        "by_org": by_org,
        "week": {"new": sum(1 for r in rows if r["occurred_at"] >= start),
                 "resolved": sum(1 for r in rows if r["resolved_at"] and r["resolved_at"] >= start
                                 and r["status"] not in OPEN_STATUSES),
                 "open": sum(1 for r in rows if r["status"] in OPEN_STATUSES)},
        "per_week": [{"week": m.isoformat(), "open": open_at(e)} for m, e in zip(mondays, ends, strict=True)],
    }


def _figures(user, now) -> dict:
    scope = Scope(user=user, now=now)
    organization_rows(scope)
    return interaction_figures(scope)


def _tables() -> tuple[set, set, set]:
    return (set(InteractionCount.objects.values_list("organization_id", "visibility", "severity", "open", "unbounded")),
            set(InteractionWeek.objects.values_list("organization_id", "visibility", "week", "opened", "closed")),
            _mentions())


def _mentions() -> set:
    return set(TagMention.objects.values_list("interaction_id", "tag_id", "organization_id", "visibility",
                                              "occurred_at"))


def _links() -> set:
    """What the mentions must hold: every tag on every interaction, with the interaction's row as stored."""
    return {(i.pk, tag.pk, i.organization_id, i.visibility, i.occurred_at)
            for i in Interaction.objects.prefetch_related("tags") for tag in i.tags.all()}


def _raw_heatmap(user, now, window) -> dict:
    """The heat map's counts the plain way: {(tag slug, organization id): (in the window, in the one before)}."""
    counts: dict = defaultdict(lambda: [0, 0])
    for i in Interaction.objects.restrict(user).prefetch_related("tags"):
        if now - datetime.timedelta(days=2 * window) <= i.occurred_at <= now:
            for tag in i.tags.all():
                counts[tag.slug, i.organization_id][i.occurred_at < now - datetime.timedelta(days=window)] += 1
    return {key: tuple(value) for key, value in counts.items()}


def _heatmap_counts(user, now, window) -> dict:
    scope = Scope(user=user, now=now, window=window)
    rows = organization_rows(scope)
    slugs = {o["slug"]: o["id"] for o in rows}
    found = heatmap(scope, rows)
    cells = {(row["tag"], slugs[cell["organization"]]): (cell["count"], cell["previous"])
             for row in found["rows"] for cell in row["cells"] if cell["count"] or cell["previous"]}
    # Organizations with tags only in the window before have no column: their totals still count them.
    totals = {row["tag"]: (row["total"], row["previous"]) for row in found["rows"]}
    return {"cells": cells, "totals": totals}


def _assert_exact(world):
    now = timezone.now()
    for user in (world.pm, world.customer_a, world.lead_b):
        assert _figures(user, now) == _raw(user, now), user.username
        for window in (7, 28):
            raw = _raw_heatmap(user, now, window)
            found = _heatmap_counts(user, now, window)
            active = {org for (_, org), (cur, _) in raw.items() if cur}
            assert found["cells"] == {key: value for key, value in raw.items() if key[1] in active}, user.username
            totals = defaultdict(lambda: [0, 0])
            for (slug, _), (cur, prev) in raw.items():
                totals[slug][0] += cur
                totals[slug][1] += prev
            assert found["totals"] == {slug: tuple(value) for slug, value in totals.items()}, user.username
    assert _mentions() == _links()
    kept = _tables()
    tallies.rebuild()
    assert _tables() == kept, "the counts kept on write differ from a recount"


def _change(item, actor, **fields):
    """Edit as the page and the API do: save, then the service records the change."""
    with transaction.atomic():
        before = services.snapshot(item)
        for name, value in fields.items():
            setattr(item, name, value)
        item.save()
        services.changed(item, before, actor)


def _create(org, actor, days_ago, tags=(), **fields):
    now = timezone.now()
    with transaction.atomic():
        item = Interaction.objects.create(organization=org, summary=f"q{days_ago}",
                                          occurred_at=now - datetime.timedelta(days=days_ago, minutes=3), **fields)
        item.tags.set(tags)
        services.created(item, actor)
    return item


@pytest.fixture
def tags(db):
    return [ChallengeTag.objects.create(slug=f"tag-{k}", name=f"Tag {k}") for k in range(4)]


def test_tallies_equal_the_raw_figures_through_creates_edits_status_changes_and_deletes(world, tags):
    rng = random.Random(7)
    now = timezone.now()
    items = []
    for k in range(40):
        org = world.org_a if k % 3 else world.org_b
        status = rng.choice(["open", "waiting_customer", "waiting_aws", "resolved"])
        items.append(_create(org, world.lead_a, rng.randint(0, 120), status=status, tags=rng.sample(tags, k % 3),
                             severity=rng.choice(SEVERITIES_WORST_FIRST), visibility=rng.choice(["shared", "internal"])))
    # An interaction resolved after some weeks, one resolved before it occurred (never open), and one the
    # services created resolved (its resolution time is set by a queryset update).
    items.append(_create(world.org_a, world.lead_a, 60, status="resolved", visibility="shared",
                         resolved_at=now - datetime.timedelta(days=20)))
    items.append(_create(world.org_a, world.lead_a, 10, status="resolved", resolved_at=now - datetime.timedelta(days=30)))
    _assert_exact(world)

    # Status changes (resolving sets resolved_at, re-opening clears it), severity, visibility, dates, moves.
    for item in items[:10]:
        _change(item, world.lead_a, status="resolved" if item.status in OPEN_STATUSES else "open")
    for item in items[10:15]:
        _change(item, world.lead_a, severity="critical", visibility="shared")
    for item in items[15:20]:
        _change(item, world.lead_a, occurred_at=item.occurred_at - datetime.timedelta(days=17))
    for item in items[20:23]:
        _change(item, world.lead_a, organization=world.org_b if item.organization_id == world.org_a.pk
                else world.org_a)
    Interaction.objects.filter(pk=items[23].pk).first().save()  # a save without changes changes nothing
    _assert_exact(world)

    for item in items[24:34]:
        item.delete()
    _assert_exact(world)
    assert InteractionWeek.objects.exists() and InteractionCount.objects.exists()

    # Deleting an organization takes its interactions and their counts with it.
    world.org_b.delete()
    assert not InteractionCount.objects.filter(organization_id=world.org_b.pk).exists()
    assert not InteractionWeek.objects.filter(organization_id=world.org_b.pk).exists()
    assert not TagMention.objects.filter(organization_id=world.org_b.pk).exists()
    assert _mentions() == _links()


def test_tag_mentions_follow_tags_added_and_removed_from_either_side(world, tags):
    rng = random.Random(11)
    items = [_create(world.org_a if k % 2 else world.org_b, world.lead_a, rng.randint(0, 60),
                     visibility=rng.choice(["shared", "internal"]), tags=tags[: k % 3]) for k in range(12)]
    assert TagMention.objects.count() == sum(k % 3 for k in range(12))
    _assert_exact(world)

    items[0].tags.add(tags[3])
    items[1].tags.remove(tags[0])
    items[2].tags.set([tags[1], tags[3]])
    items[3].tags.clear()
    tags[2].interactions.add(items[4], items[5])  # from the tag's side
    tags[1].interactions.remove(items[2])
    _assert_exact(world)

    tags[0].interactions.clear()
    tags[3].delete()
    _assert_exact(world)
    assert not TagMention.objects.filter(tag_id__in=[tags[0].pk, tags[3].pk]).exists()

    # Edits of what a mention copies (the date, the visibility, the organization) rewrite it; others do not.
    _change(items[4], world.lead_a, occurred_at=items[4].occurred_at - datetime.timedelta(days=30))
    _change(items[5], world.lead_a, visibility="internal" if items[5].visibility == "shared" else "shared")
    _change(items[6], world.lead_a, organization=world.org_b if items[6].organization_id == world.org_a.pk
            else world.org_a)
    _change(items[7], world.lead_a, summary="renamed")
    _assert_exact(world)
    items[4].delete()
    assert not TagMention.objects.filter(interaction_id=items[4].pk).exists()
    _assert_exact(world)


def test_mention_copy_ignores_unsaved_values_outside_update_fields(world, tags):
    item = _create(world.org_a, world.lead_a, 3, tags=tags[:2])
    stored = item.occurred_at
    item.occurred_at = stored - datetime.timedelta(days=40)  # changed in memory only
    item.summary = "renamed"
    item.save(update_fields=["summary"])
    assert set(TagMention.objects.filter(interaction=item).values_list("occurred_at", flat=True)) == {stored}
    _assert_exact(world)


def test_rebuild_counts_what_bulk_loads_stored(world):
    now = timezone.now()
    Interaction.objects.bulk_create([
        Interaction(organization=world.org_a, summary=f"bulk {k}", occurred_at=now - datetime.timedelta(days=k),
                    status="open" if k % 2 else "resolved", visibility="shared",
                    resolved_at=None if k % 2 else now - datetime.timedelta(days=k // 2)) for k in range(1, 30)])
    assert not InteractionCount.objects.exists()  # bulk_create sends no signal
    from django.core.management import call_command

    through = Interaction.tags.through
    tag = ChallengeTag.objects.create(slug="bulk", name="Bulk")
    through.objects.bulk_create([through(interaction=i, challengetag=tag) for i in Interaction.objects.all()])
    assert not TagMention.objects.exists()
    call_command("rebuild_interaction_tallies")
    assert _figures(world.pm, now) == _raw(world.pm, now)
    assert _mentions() == _links() and len(_links()) == 29
    assert sum(InteractionCount.objects.values_list("open", flat=True)) == 15  # k = 1, 3, … 29


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_lose_no_count(world):
    """Two writers, each in its own connection, creating and resolving in the same organization and weeks."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite allows one writer at a time")
    errors = []
    start = threading.Barrier(2)

    def writer(seed):
        rng = random.Random(seed)
        try:
            start.wait(timeout=30)
            for k in range(12):
                item = _create(world.org_a, world.lead_a, rng.randint(0, 20), status="open",
                               visibility=rng.choice(["shared", "internal"]))
                if k % 3 == 0:
                    _change(item, world.lead_a, status="resolved")
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert Interaction.objects.filter(organization=world.org_a).count() == 24
    counts = defaultdict(int)
    for visibility, n in InteractionCount.objects.filter(organization=world.org_a).values_list("visibility", "open"):
        counts[visibility] += n
    assert sum(counts.values()) == Interaction.objects.filter(organization=world.org_a, status="open").count() == 16
    _assert_exact(world)


@pytest.mark.django_db(transaction=True)
def test_tags_added_while_the_interaction_moves_are_copied_as_it_ends(world, tags):
    """One writer adds tags while another changes the interaction's date, visibility and organization: each
    mention holds what the interaction's row holds at the end (the adder waits for the edit's row lock)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite allows one writer at a time")
    rng = random.Random(5)
    items = [_create(world.org_a, world.lead_a, rng.randint(0, 20), visibility="shared") for _ in range(6)]

    def act(i):
        for item in items:
            if i == 0:
                with transaction.atomic():
                    Interaction.objects.get(pk=item.pk).tags.add(*tags)
            else:
                fresh = Interaction.objects.get(pk=item.pk)
                _change(fresh, world.lead_a, occurred_at=fresh.occurred_at - datetime.timedelta(days=9),
                        visibility="internal", organization=world.org_b)

    assert [r for r in race(2, act) if r is not None] == []
    assert len(_links()) == 6 * len(tags)
    assert _mentions() == _links()
    assert set(TagMention.objects.values_list("organization_id", "visibility")) == {(world.org_b.pk, "internal")}


def test_this_weeks_figures_and_the_last_point_with_rows_dated_after_now(world):
    """The week's new and resolved come from the weekly pre-aggregates, and the chart's last point is the
    week's end corrected by rows dated between now and then: checked against the plain count at a Thursday
    noon with interactions resolved or occurring later that week, and next week."""
    from portal.core.weeks import week_start_of
    from portal.review.figures.scope import at

    now = at(week_start_of(timezone.localdate())) + datetime.timedelta(days=3, hours=12)
    hours = datetime.timedelta(hours=1)

    def make(org, occurred, resolved=None, status="open", visibility="shared"):
        with transaction.atomic():
            item = Interaction.objects.create(organization=org, summary="dated", occurred_at=occurred,
                                              resolved_at=resolved, status=status, visibility=visibility)
            services.created(item, world.lead_a)

    make(world.org_a, now - 50 * hours, now + 5 * hours, status="resolved")  # open now, resolved later this week
    make(world.org_a, now - 200 * hours, now + 30 * hours)  # resolved later this week, status still open
    make(world.org_a, now + 2 * hours)  # occurs later this week, open
    make(world.org_b, now + 3 * hours, now + 4 * hours, status="resolved")  # comes and goes later this week
    make(world.org_b, now + 6 * hours, now + 200 * hours, visibility="internal")  # open at the week's end
    make(world.org_a, now + 120 * hours)  # next week
    make(world.org_a, now - 30 * hours, now - 2 * hours, status="resolved")  # resolved this week, before now
    make(world.org_b, now - 10 * 24 * hours)  # open since last week
    make(world.org_a, now - 3 * hours, None, status="resolved")  # new this week, never counted as open
    for user in (world.pm, world.customer_a, world.lead_b):
        assert _figures(user, now) == _raw(user, now), user.username
