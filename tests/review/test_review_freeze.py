"""Freezing a week: the snapshot, refusing a second freeze, notes, action items and their carry-over."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core import submissions
from portal.review import services
from portal.review.models import ActionItem, WeeklyReview, week_start_of
from tests.queries import assert_flat_queries
from tests.review.factories_review import WeeklyReviewFactory, program


def test_freeze_stores_the_snapshot_and_refuses_a_second_freeze(world, client):
    program(2, prefix="frz")
    client.force_login(world.pm)
    response = client.post(reverse("review:review_freeze"), {"notes": "NCCL fix shared", "confirm": "1"})
    review = WeeklyReview.objects.get()
    assert response.status_code == 302 and response["Location"] == review.get_absolute_url()
    assert review.week_start == week_start_of(timezone.localdate())
    assert review.frozen_by == world.pm and review.notes == "NCCL fix shared"
    assert len(review.figures["organizations"]) == 4
    assert review.figures["week"]["launches"] == 6

    listing = client.get(reverse("review:review_list")).content.decode()
    assert "Freeze this week" not in listing and 'name="notes"' not in listing
    assert "This week is frozen" in listing and review.get_absolute_url() in listing

    # A second tab still showing the form: the freeze is refused, the notes typed are kept.
    again = client.post(reverse("review:review_freeze"), {"notes": "other", "confirm": "1"}, follow=True)
    assert WeeklyReview.objects.count() == 1
    assert WeeklyReview.objects.get().notes == "NCCL fix shared\n\nother"
    assert "was already frozen" in again.content.decode() and "Your notes were added" in again.content.decode()


@pytest.mark.parametrize("role", ["customer_a", "lead_a", "lead_b"])
def test_only_program_managers_freeze(world, client, role):
    client.force_login(getattr(world, role))
    assert client.post(reverse("review:review_freeze"), {"notes": "", "confirm": "1"}).status_code == 403
    assert client.get(reverse("review:review_freeze")).status_code == 403
    assert not WeeklyReview.objects.exists()


def test_open_action_items_carry_over_until_done(world):
    this_week = week_start_of(timezone.localdate())
    two_ago = WeeklyReviewFactory(week_start=this_week - datetime.timedelta(weeks=2))
    done = ActionItem.objects.create(review=two_ago, title="done already", owner=world.lead_a, done=True)
    open_item = ActionItem.objects.create(review=two_ago, title="rerun NCCL test", owner=world.lead_a,
                                          due=this_week - datetime.timedelta(days=3))
    last = services.freeze(world.pm, now=timezone.now() - datetime.timedelta(weeks=1))
    carried = list(last.action_items.all())
    assert [(i.title, i.carried_from_id, i.owner_id) for i in carried] == [("rerun NCCL test", open_item.pk, world.lead_a.pk)]
    assert done.carried_to.count() == 0
    services.set_done(carried[0], True)
    ActionItem.objects.create(review=last, title="new this week", owner=world.pm)
    current = services.freeze(world.pm)
    assert [i.title for i in current.action_items.all()] == ["new this week"]
    assert current.action_items.get().carried_from.review == last


def test_changes_since_the_previous_review(world, client):
    program(1, prefix="chg", clusters=1)
    services.freeze(world.pm, now=timezone.now() - datetime.timedelta(weeks=1))
    program(1, prefix="chh", clusters=2)
    current = services.freeze(world.pm)
    client.force_login(world.pm)
    response = client.get(current.get_absolute_url())
    changes = {c["label"]: (c["before"], c["after"], c["delta"]) for c in response.context["changes"]}
    assert changes["Clusters ready"] == (1, 2, 1)
    assert changes["Clusters creating"] == (0, 1, 1)
    assert changes["Chh 0000: clusters"] == (0, 2, 2)
    assert "What changed since the week of" in response.content.decode()


def test_notes_and_action_items_from_the_page(world, client):
    review = services.freeze(world.pm)
    client.force_login(world.pm)
    assert client.post(reverse("review:review_notes", kwargs={"pk": review.pk}), {"notes": "updated"}).status_code == 302
    review.refresh_from_db()
    assert review.notes == "updated"
    url = reverse("review:actionitem_add", kwargs={"pk": review.pk})
    bad = client.post(url, {"title": "", "owner": world.lead_a.pk, "due": "not a date"})
    assert bad.status_code == 400
    assert set(bad.context["item_form"].errors) == {"title", "due"}
    assert not ActionItem.objects.exists()
    foreign_owner = client.post(url, {"title": "x", "owner": world.customer_a.pk, "due": "2026-12-01"})
    assert foreign_owner.status_code == 400 and "owner" in foreign_owner.context["item_form"].errors
    ok = client.post(url, {"title": "Extend the capacity block", "owner": world.lead_a.pk, "due": "2026-12-01"})
    assert ok.status_code == 302
    item = ActionItem.objects.get()
    assert (item.title, item.owner, item.due) == ("Extend the capacity block", world.lead_a, datetime.date(2026, 12, 1))
    done = client.post(reverse("review:actionitem_done", kwargs={"pk": item.pk}), {"done": "1"}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and "Reopen" in done.content.decode()
    item.refresh_from_db()
    assert item.done and item.done_at is not None


@pytest.mark.parametrize("role", ["customer_a", "lead_a"])
def test_others_cannot_change_a_review(world, client, role):
    review = services.freeze(world.pm, notes="kept")
    item = ActionItem.objects.create(review=review, title="t", owner=world.pm)
    client.force_login(getattr(world, role))
    assert client.post(reverse("review:review_notes", kwargs={"pk": review.pk}), {"notes": "x"}).status_code == 403
    assert client.post(reverse("review:actionitem_done", kwargs={"pk": item.pk}), {"done": "1"}).status_code == 403
    assert client.get(review.get_absolute_url()).status_code == 403
    review.refresh_from_db()
    item.refresh_from_db()
    assert review.notes == "kept" and not item.done


def test_review_list_and_detail_query_counts_do_not_grow(world, client):
    client.force_login(world.pm)
    first = WeeklyReviewFactory(frozen_by=world.pm)

    def grow(n):
        for review in [first, *WeeklyReviewFactory.create_batch(n - 1, frozen_by=world.pm)]:
            ActionItem.objects.bulk_create([ActionItem(review=review, title=f"a{j}", owner=world.lead_a)
                                            for j in range(n)])

    assert_flat_queries(client, reverse("review:review_list"), grow=grow, sizes=(3, 30), at_most=8)
    assert_flat_queries(client, first.get_absolute_url(), grow=grow, sizes=(3, 30), at_most=10)


def test_freezing_asks_for_notes_and_a_confirmation_first(world, client):
    """The overview's button opens the confirmation (a page, or its htmx dialog); the list's notes form
    leads to it with the notes kept; only the confirmed POST freezes."""
    last = services.freeze(world.pm, now=timezone.now() - datetime.timedelta(weeks=1))
    ActionItem.objects.create(review=last, title="Share the NCCL fix", owner=world.lead_a)
    ActionItem.objects.create(review=last, title="Closed already", owner=world.lead_a, done=True)
    client.force_login(world.pm)
    overview = client.get(reverse("review:overview")).content.decode()
    assert f'hx-get="{reverse("review:review_freeze")}"' in overview and 'id="freeze-dialog"' in overview

    page = client.get(reverse("review:review_freeze"))
    text = page.content.decode()
    assert page.status_code == 200 and 'name="notes"' in text and 'name="confirm"' in text
    assert "1 open action item" in text and "Share the NCCL fix" in text and "Closed already" not in text
    assert f"Freeze the week of {week_start_of(timezone.localdate()):%Y-%m-%d}?" in text
    dialog = client.get(reverse("review:review_freeze"), headers={"HX-Request": "true"}).content.decode()
    assert dialog.lstrip().startswith("<dialog open") and "<html" not in dialog and 'formmethod="dialog"' in dialog

    # The list's form sends notes without confirming: the confirmation comes back with them, nothing frozen.
    step = client.post(reverse("review:review_freeze"), {"notes": "Beta onboarded"})
    assert step.status_code == 200 and "Beta onboarded" in step.content.decode()
    assert WeeklyReview.objects.count() == 1

    done = client.post(reverse("review:review_freeze"), {"notes": "Beta onboarded", "confirm": "1"})
    current = WeeklyReview.objects.get(week_start=week_start_of(timezone.localdate()))
    assert done.status_code == 302 and done["Location"] == current.get_absolute_url()
    assert current.notes == "Beta onboarded"
    assert list(current.action_items.values_list("title", flat=True)) == ["Share the NCCL fix"]
    frozen = client.get(reverse("review:review_freeze")).content.decode()
    assert "This week is frozen" in frozen and 'name="confirm"' not in frozen


def test_a_double_submitted_confirmation_freezes_once(world, client):
    client.force_login(world.pm)
    key = submissions.new_key()
    payload = {"notes": "Once", "confirm": "1", submissions.FIELD: key}
    first = client.post(reverse("review:review_freeze"), payload)
    second = client.post(reverse("review:review_freeze"), payload)
    review = WeeklyReview.objects.get()
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == review.get_absolute_url()
    assert review.notes == "Once"  # the repeat added nothing to the notes


def test_the_dialog_confirmation_answers_htmx_with_the_review_location(world, client):
    client.force_login(world.pm)
    response = client.post(reverse("review:review_freeze"), {"notes": "", "confirm": "1"},
                           headers={"HX-Request": "true"})
    assert response.status_code == 204 and response["HX-Location"] == WeeklyReview.objects.get().get_absolute_url()
